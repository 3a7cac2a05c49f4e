"""What can be measured and what a namespace asks for: the ops (one module each), the toolchains and
implementations and their display names, the configuration schemas, and the namespace files that choose among them.
Imports only `core`."""
