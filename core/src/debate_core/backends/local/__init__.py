"""The ``local`` backend: the Tinker client contract on torch, on this machine.

``service.LocalServiceClient`` is the entry point; ``options.LocalBackendOptions`` its
``[backend.options]``. Importing this package (or ``options``) never imports torch.
"""
