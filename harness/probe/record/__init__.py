"""The recording probe (``__main__``): Ragas scoring with a live judge, every reply recorded (``recorder``)."""
