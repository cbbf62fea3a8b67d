#pragma once
// A trained model as an ONNX file (`strom export --onnx`), so that it runs where strom does
// not: ONNX Runtime, OpenCV's DNN module, TensorRT. The graph begins with the job's
// preprocessing (its scale, and standardisation with its training set's statistics), so that
// a consumer feeds samples as the job's data files hold them, as `strom predict` takes them,
// and ends with a softmax, so that it gives the class probabilities `strom predict` prints.
//
// The file is written through protobuf with ONNX's own schema (libonnx_proto), never by hand.
// The layers' parameters need no reordering: strom keeps a batch as [N][C][H][W], dense
// weights as [units][inputs] (ONNX Gemm with transB) and convolution kernels as
// [filters][channels][k][k], ONNX's own layouts, so flattening a convolution's output for a
// dense layer is ONNX's Flatten of NCHW.
//
// Only the command-line program links this (and protobuf), not strom::strom: a host program
// that embeds strom needs neither.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/model.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_preprocessing.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::runtime {

/// The ONNX operator set the graph is written for: 13 is the first whose Softmax works on
/// one axis without coercing its input to 2-D, and OpenCV 4.6 reads it (the export's tests).
inline constexpr std::int64_t onnx_opset = 13;

/// The ONNX form of a trained model.
struct onnx_model {
  std::string bytes;                     ///< the serialised onnx.ModelProto
  std::vector<std::int64_t> input_dims;  ///< the input's dimensions after the batch's N
  std::size_t classes = 0;               ///< the width of the probabilities
  std::size_t nodes = 0;                 ///< operators in the graph
};

/// The ONNX model of `net` named `name`, `preprocessing` first and a softmax last. Its input
/// `input` is N x C x H x W for an image network and N x F for one whose input has a single
/// dimension above 1; its output `probabilities` is N x classes. A layer without an ONNX
/// form is refused naming its index and kind; statistics that do not fit the input, and a
/// model beyond protobuf's 2 GiB, are refused too.
result<onnx_model> to_onnx(const compute::model& net, const job_preprocessing& preprocessing,
                           const std::string& name);

/// Writes the ONNX model of `net`, trained by `job`, to `path` atomically: the graph is
/// named after the job and begins with its preprocessing (job_preprocessing::of, which reads
/// the training set again when the job standardises). Errors name the job or the path.
result<onnx_model> export_onnx(const compute::model& net, const job_spec& job,
                               const std::string& path);

} // namespace strom::runtime
