from _rocprof_go_standin import module_getattr

__getattr__ = module_getattr(__name__)
