pytest_plugins = ["pytester"]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "matrix_e2e: builds a real Ragas release's virtualenv for the version matrix "
                   "(PyPI, minutes cold; cached across runs in ~/.cache/ragas-compat/envs or "
                   "$RAGAS_COMPAT_MATRIX_CACHE). Select with -m matrix_e2e, skip with -m 'not matrix_e2e'.")
    config.addinivalue_line(
        "markers", "wheel: builds the wheel once per session and installs it non-editable in a fresh "
                   "virtualenv (tests/test_packaging.py; about a minute). Runs by default, as in CI; "
                   "skip with -m 'not wheel'.")
