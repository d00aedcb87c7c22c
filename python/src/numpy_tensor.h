// numpy arrays in and out of collage Tensors without copying where the memory allows.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

#include "collage/tensor.h"

namespace collage::python {

// A C-contiguous array on the CPU, read only: what an input may be borrowed from.
using InputArray = nanobind::ndarray<nanobind::ro, nanobind::c_contig, nanobind::device::cpu>;

// A Tensor viewing the array's memory (no copy): the array must outlive it. Throws
// StatusError for an element type collage has no DType for, naming the input.
Tensor BorrowArray(const std::string& input_name, const InputArray& array);

// A numpy array that takes over the tensor's buffer (no copy): the array owns a handle to
// it, released when numpy frees the array. Throws StatusError for a dtype numpy has no type
// for (bfloat16), naming the output.
nanobind::object TensorToNumpy(const std::string& output_name, Tensor tensor);

}  // namespace collage::python
