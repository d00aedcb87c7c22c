// Whether this test binary was built with AddressSanitizer: its reports replace some crash
// signals, and its bookkeeping makes time and memory bounds meaningless.
#pragma once

namespace collage::testing {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

}  // namespace collage::testing
