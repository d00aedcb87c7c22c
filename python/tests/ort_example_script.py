"""A script written for ONNX Runtime's Python API, as its documentation shows it: session
options, providers, model metadata, inputs and outputs, a run by output name, I/O binding with
numpy arrays and OrtValues, and profiling. test_ort_compatibility.py runs it as it is with
ONNX Runtime, and with only the import line changed to collage, and compares what it saved.

    python ort_example_script.py MODEL.onnx RESULTS.npz
"""
import json
import sys

import numpy as np
import onnxruntime as rt

model_path, results_path = sys.argv[1], sys.argv[2]

print("providers available:", rt.get_available_providers(), "device:", rt.get_device())
options = rt.SessionOptions()
options.intra_op_num_threads = 1
options.graph_optimization_level = rt.GraphOptimizationLevel.ORT_ENABLE_ALL
options.enable_profiling = True
session = rt.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
print("providers used:", session.get_providers())

meta = session.get_modelmeta()
print("model:", meta.producer_name, meta.graph_name, meta.version, meta.custom_metadata_map)

first = session.get_inputs()[0]
print("input:", first.name, first.type, first.shape)
outputs = [o.name for o in session.get_outputs()]
print("outputs:", outputs)

x = np.random.RandomState(0).rand(*[d if isinstance(d, int) else 1 for d in first.shape]).astype(np.float32)
by_name = session.run([outputs[-1]], {first.name: x})[0]
every = session.run(None, {first.name: x})

# I/O binding: a numpy input, an output allocated by the runtime.
binding = session.io_binding()
binding.bind_cpu_input(first.name, x)
binding.bind_output(outputs[0])
session.run_with_iobinding(binding)
bound = binding.copy_outputs_to_cpu()[0]

# I/O binding with OrtValues: the input by its buffer, the output into a preallocated value.
x_value = rt.OrtValue.ortvalue_from_numpy(x, "cpu", 0)
y_value = rt.OrtValue.ortvalue_from_shape_and_type(every[0].shape, np.float32, "cpu", 0)
binding = session.io_binding()
binding.bind_input(name=first.name, device_type=x_value.device_name(), device_id=0,
                   element_type=np.float32, shape=x_value.shape(), buffer_ptr=x_value.data_ptr())
binding.bind_ortvalue_output(outputs[0], y_value)
session.run_with_iobinding(binding)
preallocated = y_value.numpy()

# A bad input name is an error naming it.
try:
    session.run(None, {"no_such_input": x})
    bad_name_refused = False
except Exception as error:  # noqa: BLE001 — each runtime raises its own class
    bad_name_refused = "no_such_input" in str(error)

trace_file = session.end_profiling()
with open(trace_file) as f:
    trace = json.load(f)
events = trace if isinstance(trace, list) else trace["traceEvents"]
print("profile:", trace_file, len(events), "events")

np.savez(results_path, by_name=by_name, bound=bound, preallocated=preallocated,
         bad_name_refused=bad_name_refused, profiled=len(events) > 0,
         **{f"output_{i}": o for i, o in enumerate(every)})
