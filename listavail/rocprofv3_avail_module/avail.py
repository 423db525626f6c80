# rocprof-go's implementation of rocprofv3_avail_module.avail, written from
# the list-avail ABI (docs/rocprofiler-compute.md): the same names clients
# use (loadLibrary.libname, get_counters(), get_agent_info_map(), ...; counter
# objects with .name, .description, .dimensions, and .block on hardware
# counters or .expression on derived ones).
"""Counters per agent, read from librocprofv3-list-avail.so."""

import ctypes
import json
import os
import sys

_U64 = ctypes.c_uint64
_SIZE = ctypes.c_size_t
_STR = ctypes.c_char_p

GPU_AGENT_TYPE = 2


class loadLibrary:  # noqa: N801 (the name clients set libname on)
    """Where the library is: clients set loadLibrary.libname before the
    first call; otherwise the library installed with this module
    (PREFIX/lib/rocprofiler-sdk/ for a module in PREFIX/bin/) is used."""

    libname = None
    c_lib = None


def _default_libname():
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = os.path.dirname(os.path.dirname(here))
    for rel in (("lib", "rocprofiler-sdk"), ("lib",)):
        path = os.path.join(prefix, *rel, "librocprofv3-list-avail.so")
        if os.path.exists(path):
            return path
    return "librocprofv3-list-avail.so"


def _declare(lib):
    sigs = {
        "get_number_of_agents": (_SIZE, []),
        "agent_handles": (None, [ctypes.POINTER(_U64), _SIZE]),
        "agent_info": (None, [_U64, ctypes.POINTER(_STR)]),
        "get_number_of_agent_counters": (_SIZE, [_U64]),
        "agent_counter_handles": (None, [ctypes.POINTER(_U64), _U64, _SIZE]),
        "counter_info": (
            None,
            [_U64, ctypes.POINTER(_STR), ctypes.POINTER(_STR),
             ctypes.POINTER(ctypes.c_uint8), ctypes.POINTER(ctypes.c_uint8)],
        ),
        "counter_block": (None, [_U64, ctypes.POINTER(_STR)]),
        "counter_expression": (None, [_U64, ctypes.POINTER(_STR)]),
        "get_number_of_dimensions": (_SIZE, [_U64]),
        "counter_dimension_ids": (None, [_U64, ctypes.POINTER(_U64), _SIZE]),
        "counter_dimension": (None, [_U64, _U64, ctypes.POINTER(_STR), ctypes.POINTER(_U64)]),
        "get_number_of_pc_sample_configs": (_SIZE, [_U64]),
        "pc_sample_config": (None, [_U64, _U64] + [ctypes.POINTER(_U64)] * 5),
        "is_counter_set": (ctypes.c_bool, [ctypes.POINTER(_U64), _U64, _SIZE]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def get_library():
    if loadLibrary.c_lib is None:
        loadLibrary.c_lib = _declare(ctypes.CDLL(loadLibrary.libname or _default_libname()))
    return loadLibrary.c_lib


def _text(ptr):
    return ptr.value.decode("utf-8", "replace") if ptr.value is not None else ""


class dimension:  # noqa: N801
    columns = ["Dimension_Id", "Dimension_Name", "Dimension_Instances"]

    def __init__(self, dimension_id, dimension_name, dimension_instances):
        self.id = dimension_id
        self.name = dimension_name
        self.instances = dimension_instances

    def get_as_dict(self):
        return {"Dimension_Id": self.id, "Dimension_Name": self.name,
                "Dimension_Instances": self.instances}

    def __str__(self):
        return "%s[0:%d]" % (self.name, self.instances - 1)


class counter:  # noqa: N801
    """An agent-property constant (no block, no expression)."""

    columns = ["Counter_Name", "Description"]

    def __init__(self, counter_handle, counter_name, counter_description,
                 counter_dimensions, is_hw_constant):
        self.counter_handle = counter_handle
        self.name = counter_name
        self.description = counter_description
        self.dimensions = counter_dimensions
        self.is_hw_constant = is_hw_constant

    def get_as_dict(self):
        return {"Counter_Name": self.name, "Description": self.description}

    def __str__(self):
        lines = ["{:20}:\t{}".format(k, v) for k, v in self.get_as_dict().items()]
        if self.dimensions:
            lines.append("{:20}:\t{}".format("Dimensions", " ".join(str(d) for d in self.dimensions)))
        return "\n".join(lines)


class basic_counter(counter):  # noqa: N801
    """A hardware counter: .block."""

    columns = ["Counter_Name", "Description", "Block"]

    def __init__(self, counter_handle, counter_name, counter_description, counter_block,
                 counter_dimensions, is_hw_constant):
        super().__init__(counter_handle, counter_name, counter_description,
                         counter_dimensions, is_hw_constant)
        self.block = counter_block

    def get_as_dict(self):
        return {"Counter_Name": self.name, "Description": self.description, "Block": self.block}


class derived_counter(counter):  # noqa: N801
    """A derived counter: .expression."""

    columns = ["Counter_Name", "Description", "Expression"]

    def __init__(self, counter_handle, counter_name, counter_description, counter_expression,
                 counter_dimensions, is_hw_constant):
        super().__init__(counter_handle, counter_name, counter_description,
                         counter_dimensions, is_hw_constant)
        self.expression = counter_expression

    def get_as_dict(self):
        return {"Counter_Name": self.name, "Description": self.description,
                "Expression": self.expression}


def get_number_agents():
    return get_library().get_number_of_agents()


def get_agent_handles():
    lib = get_library()
    n = lib.get_number_of_agents()
    arr = (_U64 * max(n, 1))()
    lib.agent_handles(arr, n)
    return list(arr)[:n]


def get_agent_info(agent_handle):
    out = _STR()
    get_library().agent_info(agent_handle, ctypes.byref(out))
    return json.loads(_text(out) or "{}")


def get_agent_info_map():
    return {agent: get_agent_info(agent) for agent in get_agent_handles()}


def get_number_of_agent_counters(agent_handle):
    return get_library().get_number_of_agent_counters(agent_handle)


def get_agent_counter_handles(agent_handle):
    lib = get_library()
    n = lib.get_number_of_agent_counters(agent_handle)
    arr = (_U64 * max(n, 1))()
    lib.agent_counter_handles(arr, agent_handle, n)
    return list(arr)[:n]


def get_dimensions(counter_handle):
    lib = get_library()
    n = lib.get_number_of_dimensions(counter_handle)
    ids = (_U64 * max(n, 1))()
    lib.counter_dimension_ids(counter_handle, ids, n)
    dims = []
    for dim_id in list(ids)[:n]:
        name, size = _STR(), _U64()
        lib.counter_dimension(counter_handle, dim_id, ctypes.byref(name), ctypes.byref(size))
        dims.append(dimension(dim_id, _text(name), size.value))
    return dims


def get_counter_info(counter_handle):
    lib = get_library()
    name, desc = _STR(), _STR()
    derived, constant = ctypes.c_uint8(), ctypes.c_uint8()
    lib.counter_info(counter_handle, ctypes.byref(name), ctypes.byref(desc),
                     ctypes.byref(derived), ctypes.byref(constant))
    if derived.value:
        expr = _STR()
        lib.counter_expression(counter_handle, ctypes.byref(expr))
        return derived_counter(counter_handle, _text(name), _text(desc), _text(expr),
                               get_dimensions(counter_handle), constant.value)
    if not constant.value:
        block = _STR()
        lib.counter_block(counter_handle, ctypes.byref(block))
        return basic_counter(counter_handle, _text(name), _text(desc), _text(block),
                             get_dimensions(counter_handle), constant.value)
    return counter(counter_handle, _text(name), _text(desc), [], constant.value)


def get_counters():
    """{agent handle: [counter objects]} for every GPU agent, in listing order."""
    result = {}
    for agent, info in get_agent_info_map().items():
        if info.get("type") != GPU_AGENT_TYPE:
            continue
        result[agent] = [get_counter_info(h) for h in get_agent_counter_handles(agent)]
    return result


class pc_config:  # noqa: N801
    """One PC-sampling configuration of an agent: .method and .unit as
    rocprofiler-sdk's words (stochastic, host_trap; instructions, cycle,
    time), .min_interval, .max_interval and .flags as the ctypes integers
    the library filled (.value), as rocprofiler-sdk's module keeps them;
    str() is rocprofv3-avail's listing of it."""

    columns = ["Method", "Unit", "Min_Interval", "Max_Interval", "Flags"]
    methods = {1: "stochastic", 2: "host_trap"}  # rocprofiler_pc_sampling_method_t
    units = {1: "instructions", 2: "cycle", 3: "time"}  # rocprofiler_pc_sampling_unit_t

    def __init__(self, config_method, config_unit, min_interval, max_interval, flags):
        self.method = self.methods.get(config_method.value, "none")
        self.unit = self.units.get(config_unit.value, "none")
        self.min_interval = min_interval
        self.max_interval = max_interval
        self.flags = flags

    def get_as_dict(self):
        return dict(zip(self.columns, [self.method, self.unit, self.min_interval,
                                       self.max_interval, self.flags]))

    def __str__(self):
        # flags: ROCPROFILER_PC_SAMPLING_CONFIGURATION_FLAGS_INTERVAL_POW2 is 1
        shown = [self.method, self.unit, self.min_interval.value, self.max_interval.value,
                 "interval pow2" if self.flags.value == 1 else "none"]
        return "\n".join("   {:20}:\t{}".format(k, v) for k, v in zip(self.columns, shown))


def get_number_of_pc_sample_configs(agent_handle):
    return get_library().get_number_of_pc_sample_configs(agent_handle)


def get_pc_sample_config(agent_handle):
    """The agent's PC-sampling configurations (pc_config objects), in the
    order rocprofv3 -L lists them; [] for an agent without PC sampling."""
    lib = get_library()
    configs = []
    for idx in range(lib.get_number_of_pc_sample_configs(agent_handle)):
        vals = [_U64() for _ in range(5)]
        lib.pc_sample_config(agent_handle, idx, *[ctypes.byref(v) for v in vals])
        configs.append(pc_config(*vals))
    return configs


def get_pc_sample_configs():
    """{agent handle: [pc_config]} for the agents that have PC sampling."""
    result = {}
    for agent in get_agent_handles():
        configs = get_pc_sample_config(agent)
        if configs:
            result[agent] = configs
    return result


def check_pmc(agent_counter):
    """Exits with an error naming the counters unless, for every agent, its
    counter handles are counters of that agent."""
    lib = get_library()
    for agent, handles in agent_counter.items():
        arr = (_U64 * max(len(handles), 1))(*handles)
        if not lib.is_counter_set(arr, agent, len(handles)):
            names = " ".join(get_counter_info(h).name for h in handles)
            sys.stderr.write("Fatal error: %s not collected on agent %s\n"
                             % (names, get_agent_info(agent).get("name", agent)))
            sys.stderr.flush()
            sys.exit(1)
    return True
