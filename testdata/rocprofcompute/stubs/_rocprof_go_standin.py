"""Import-only stand-ins for Python packages Debian does not package.

rocprofiler-compute imports them at module level (its web GUI, TUI and
terminal plots), but `profile` and the CLI `analyze` of the rocprof-go test
(make test-rocprofiler-compute, docs/rocprofiler-compute.md) never call
them. Any name can be imported from a stand-in; using it raises.
"""


class _Unavailable:
    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{self._name}: a rocprof-go test stand-in (testdata/rocprofcompute/stubs) "
            "only satisfies imports; install the real package to use it"
        )

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Unavailable(f"{self._name}.{attr}")

    def __mro_entries__(self, bases):
        return (object,)


def module_getattr(module):
    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Unavailable(f"{module}.{attr}")

    return __getattr__
