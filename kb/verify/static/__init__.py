"""The static pass (`kb verify --static`): what a framework's wheels say about determinism, read without installing them."""
