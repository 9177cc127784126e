"""Network ops under PyTorch's names: webtensor.nn.functional."""
from . import functional  # noqa: F401
