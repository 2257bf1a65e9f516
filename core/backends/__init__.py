"""Built-in backends, each one folder with an explicit list of its kernels."""
