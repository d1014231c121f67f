// SHA-256 block compression with the x86 SHA extensions (SHA-NI), following the round
// structure of Intel's "Intel SHA Extensions" paper: state kept as ABEF/CDGH, two rounds
// per sha256rnds2, the message schedule by sha256msg1/msg2.
#include "task_interface/sha256_blocks.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

namespace simpler::sha::blocks {
namespace {

__attribute__((target("sha,sse4.1,ssse3"))) void sha_ni(uint32_t state[8], const uint8_t* data,
                                                        size_t count) {
  // Message words are big-endian.
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));       // DCBA
  __m128i cdgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));  // HGFE
  tmp = _mm_shuffle_epi32(tmp, 0xB1);                                           // CDAB
  cdgh = _mm_shuffle_epi32(cdgh, 0x1B);                                         // EFGH
  __m128i abef = _mm_alignr_epi8(tmp, cdgh, 8);                                 // ABEF
  cdgh = _mm_blend_epi16(cdgh, tmp, 0xF0);                                      // CDGH
  for (; count > 0; --count, data += 64) {
    const __m128i abef_in = abef;
    const __m128i cdgh_in = cdgh;
    __m128i w[4];  // the last 16 schedule words, four per register
    for (int g = 0; g < 16; ++g) {
      __m128i words;
      if (g < 4) {
        words = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)),
                                 swap);
      } else {
        // W[t] = W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]), four words at a time.
        words = _mm_sha256msg1_epu32(w[g % 4], w[(g + 1) % 4]);
        words = _mm_add_epi32(words, _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4));
        words = _mm_sha256msg2_epu32(words, w[(g + 3) % 4]);
      }
      w[g % 4] = words;
      __m128i msg = _mm_add_epi32(
          words, _mm_load_si128(reinterpret_cast<const __m128i*>(kRoundConstants + 4 * g)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
      msg = _mm_shuffle_epi32(msg, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  tmp = _mm_shuffle_epi32(abef, 0x1B);      // FEBA
  cdgh = _mm_shuffle_epi32(cdgh, 0xB1);     // DCHG
  abef = _mm_blend_epi16(tmp, cdgh, 0xF0);  // DCBA
  cdgh = _mm_alignr_epi8(cdgh, tmp, 8);     // HGFE
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), abef);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), cdgh);
}

bool cpu_has_sha_ni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const bool ssse3 = (c & bit_SSSE3) != 0, sse41 = (c & bit_SSE4_1) != 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  return ssse3 && sse41 && (b & bit_SHA) != 0;
}

}  // namespace

Compress accelerated() {
  static const Compress found = cpu_has_sha_ni() ? &sha_ni : nullptr;
  return found;
}

}  // namespace simpler::sha::blocks

#else

namespace simpler::sha::blocks {
Compress accelerated() { return nullptr; }
}  // namespace simpler::sha::blocks

#endif

namespace simpler::sha::blocks {
Compress best() {
  const Compress hardware = accelerated();
  return hardware != nullptr ? hardware : &portable;
}
}  // namespace simpler::sha::blocks
