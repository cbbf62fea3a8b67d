#pragma once
// Which elements an encoded update moves. Gradient sharing uses it for momentum factor
// masking (Lin et al. 2018, "Deep Gradient Compression", section 3.2): once an element's
// accumulated update has been sent, the optimiser's momentum for it is cleared. Otherwise the
// momentum keeps pushing the gradients that built the sent value, which every replica
// receives late, and they are sent a second time.

#include <span>

#include "strom/compute/codecs/encoded_update.hpp"

namespace strom::compute {

/// Sets to 0 every element of `values` that `update` changes. `update` must be threshold- or
/// bitmap-encoded, or blocks of them (what threshold_encoder produces; dense blocks are left
/// alone), over values.size() elements, with its indices in range; throws
/// std::invalid_argument otherwise. A blocks payload must be one validate() accepts.
void clear_sent_elements(const encoded_update& update, std::span<float> values);

} // namespace strom::compute
