// Tensors that weft cannot address as one block in their logical element
// order (a transpose, channels_last, a slice with a step) go through a
// contiguous stand-in, since gloo users pass such tensors and expect them to
// work. weft then reduces, gathers or sends the elements in logical order, so
// ranks whose tensors have different layouts still agree element by element.
// (Reducing the storage of any "dense" tensor directly, as a looser check
// would allow, pairs different elements when the layouts differ; and gloo on a
// strided slice returns wrong values.) Contiguous tensors are used as they
// are, with no copy.
#pragma once

#include <ATen/ATen.h>

#include "weft_ops.h"

namespace weft_torch {

// Defined, on the CPU, strided: what every tensor must be. `name` is in the error.
void checkTensor(const at::Tensor& t, const char* name);

// As checkTensor, and every element has memory of its own: a tensor made by
// expand() cannot hold distinct results.
void checkWritable(const at::Tensor& t, const char* name);

// The tensor weft reads: `t` when contiguous, else a contiguous copy that `s`
// keeps alive until its requests complete.
at::Tensor readable(const at::Tensor& t, const char* name, Submission& s);

// dst.copy_(src) with autograd off. A collective writes into its tensors as
// data, as gloo does, also into a leaf parameter that requires grad (which an
// autograd-tracked in-place copy refuses); every copy in the backend goes here.
void copyInto(const at::Tensor& dst, const at::Tensor& src);

// The tensor weft writes: `t` when contiguous, else a contiguous stand-in that
// `s` copies into `t` once its requests and its `finish` succeeded. `inPlace`:
// the stand-in starts with t's values (the operation reads them too).
at::Tensor writable(const at::Tensor& t, const char* name, bool inPlace, Submission& s);

}  // namespace weft_torch
