"""Built-in plugins of privtool, each registered exactly like a third-party one
(see :data:`privtool.registry.BUILTIN_PLUGINS`)."""
