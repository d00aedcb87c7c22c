"""SessionOptions, RunOptions and their enums, as ONNX Runtime's Python API spells them.

collage takes what it has a counterpart for (threads, profiling) and accepts the rest, so a
script written for ONNX Runtime runs unchanged; InferenceSession.warnings() names each setting
that had no effect.
"""

import enum


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's graph optimization levels. collage always simplifies the graph (constant
    folding, fusion into backend kernels is the placement's business), so every level runs
    the same."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Sequential or parallel execution of independent nodes; collage runs nodes in order, each
    kernel using the session's threads."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """The settings of an InferenceSession, as ONNX Runtime names them.

    intra_op_num_threads   threads of every kernel (0: one per core), collage's `threads`
    enable_profiling       record the time of every kernel of every run; end_profiling()
                           writes them as a Chrome trace named profile_file_prefix + date
    Accepted, without effect (InferenceSession.warnings() says so when set to other than
    their defaults): inter_op_num_threads, graph_optimization_level, execution_mode,
    optimized_model_filepath, enable_cpu_mem_arena, enable_mem_pattern, enable_mem_reuse,
    use_deterministic_compute, log_severity_level, log_verbosity_level, logid, session config
    entries and free dimension overrides.
    """

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.optimized_model_filepath = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self._config = {}
        self._free_dimensions = {}

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        return self._config[str(key)]

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        self._free_dimensions[str(dim_name)] = int(dim_value)

    def ignored_settings(self):
        """The settings changed from their defaults that collage has no counterpart for."""
        defaults = SessionOptions()
        ignored = [name for name in ("inter_op_num_threads", "graph_optimization_level",
                                     "execution_mode", "optimized_model_filepath",
                                     "enable_cpu_mem_arena", "enable_mem_pattern",
                                     "enable_mem_reuse", "use_deterministic_compute")
                   if getattr(self, name) != getattr(defaults, name)]
        ignored += [f"session config entry '{key}'" for key in self._config]
        ignored += [f"free dimension override '{name}'" for name in self._free_dimensions]
        return ignored


class RunOptions:
    """ONNX Runtime's per-run settings; collage runs every run the same, so these are accepted
    and have no effect."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False
