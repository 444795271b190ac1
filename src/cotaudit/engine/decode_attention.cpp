// Decode attention of one new token per row over each row's own KV cache, for many rows in
// one call: the rows' keys and values are appended to their caches, then each row's query
// heads attend over exactly that row's cached positions (no padding, no other row in any
// reduction), in a fixed order of operations, so a row's result does not depend on which other
// rows share the call.
//
// Layout: keys in blocks of 16 positions, [Hkv, C / 16, d, 16] per cache row (block b holds
// positions 16 b .. 16 b + 15 dimension by dimension: the scores of a block are one vector,
// accumulated over d in registers, and a head's keys are read as one contiguous stream), values
// [Hkv, C, d]. float32.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <vector>

namespace {

constexpr int kLanes = 16;

// exp(x) for x <= 0: 2^n * p(r) with n = round(x / ln 2), r = x - n ln 2 (|r| <= ln 2 / 2) and p
// the degree-7 Taylor polynomial of e^r (relative error < 3e-8 there); branch-free, so it
// vectorizes; x below -87 gives exp(-87) ~ 1.6e-38 (a weight that vanishes beside the
// maximum's 1).
inline float exp_nonpositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  const float n = std::nearbyint(x * 1.44269504088896341f);
  const float r = x - n * 0.693147180559945309f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = static_cast<int32_t>(n + 127.0f) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

}  // namespace

// q [B, H, d] (scores are (scale q) . k); k_new, v_new [B, Hkv, d]; for job j: keys[j]
// [rows_j, Hkv, C_j / 16, d, 16], values[j] [rows_j, Hkv, C_j, d] (contiguous), lengths[j]
// positions filled before this token; the rows of q are the jobs' rows in order. Returns
// [B, H, d]:
//   out[b, h] = sum_t softmax_t(q[b, h] . K[b, h / g, t, :] * scale) V[b, h / g, t, :],
// t over the row's L + 1 positions (its cache and the new token).
at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k_new, const at::Tensor& v_new,
                            at::TensorList keys, at::TensorList values,
                            at::IntArrayRef lengths, double scale) {
  TORCH_CHECK(q.scalar_type() == at::kFloat && q.is_contiguous(), "q: contiguous float32");
  TORCH_CHECK(k_new.is_contiguous() && v_new.is_contiguous(), "k_new, v_new: contiguous");
  const int64_t B = q.size(0), H = q.size(1), d = q.size(2), Hkv = k_new.size(1);
  TORCH_CHECK(d % kLanes == 0 && H % Hkv == 0, "head size a multiple of 16, H a multiple of Hkv");
  const int64_t g = H / Hkv;
  auto out = at::empty_like(q);
  const float* qp = q.data_ptr<float>();
  const float* knp = k_new.data_ptr<float>();
  const float* vnp = v_new.data_ptr<float>();
  float* op = out.data_ptr<float>();
  // row b of q -> its cache: key and value blocks of its first head, capacity, filled length
  std::vector<float*> row_keys, row_values;
  std::vector<int64_t> row_capacity, row_length;
  for (size_t j = 0; j < keys.size(); ++j) {
    const at::Tensor& kj = keys[j];
    const at::Tensor& vj = values[j];
    TORCH_CHECK(kj.scalar_type() == at::kFloat && vj.scalar_type() == at::kFloat &&
                    kj.is_contiguous() && vj.is_contiguous() && kj.dim() == 5 &&
                    kj.size(3) == d && kj.size(4) == kLanes && vj.size(3) == d &&
                    kj.size(2) * kLanes == vj.size(2),
                "caches: contiguous float32 [rows, Hkv, C / 16, d, 16] keys and [rows, Hkv, C, "
                "d] values");
    const int64_t C = vj.size(2);
    TORCH_CHECK(lengths[j] < C, "a cache is full");
    for (int64_t r = 0; r < kj.size(0); ++r) {
      row_keys.push_back(kj.data_ptr<float>() + r * Hkv * d * C);
      row_values.push_back(vj.data_ptr<float>() + r * Hkv * d * C);
      row_capacity.push_back(C);
      row_length.push_back(lengths[j] + 1);
    }
  }
  TORCH_CHECK(static_cast<int64_t>(row_keys.size()) == B, "the caches' rows are not q's rows");
  const float sc = static_cast<float>(scale);
  // one unit = one row's kv head and its g query heads, computed whole by one thread
  at::parallel_for(0, B * Hkv, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> s, w(g * d), qs(g * d);
    for (int64_t u = begin; u < end; ++u) {
      const int64_t b = u / Hkv, kh = u % Hkv, C = row_capacity[b], L = row_length[b];
      float* K = row_keys[b] + kh * C * d;     // [C / 16, d, 16]
      float* V = row_values[b] + kh * C * d;   // [C, d]
      const float* kn = knp + (b * Hkv + kh) * d;
      float* slot = K + (L - 1) / kLanes * d * kLanes + (L - 1) % kLanes;
      for (int64_t i = 0; i < d; ++i) slot[i * kLanes] = kn[i];
      std::memcpy(V + (L - 1) * d, vnp + (b * Hkv + kh) * d, d * sizeof(float));
      const int64_t blocks = (L + kLanes - 1) / kLanes, Lp = blocks * kLanes;
      s.resize(g * Lp);
      for (int64_t i = 0; i < g * d; ++i) qs[i] = qp[(b * H + kh * g) * d + i] * sc;
      // scores: s[h, 16 c + l] = sum_i (scale q[h, i]) K[c, i, l], summed as four partial sums
      // over i mod 4, then (p0 + p1) + (p2 + p3); lanes past L hold unused values
      for (int64_t c = 0; c < blocks; ++c) {
        const float* __restrict kb = K + c * d * kLanes;
        for (int64_t h = 0; h < g; ++h) {
          const float* __restrict qh = qs.data() + h * d;
          float p0[kLanes] = {}, p1[kLanes] = {}, p2[kLanes] = {}, p3[kLanes] = {};
          for (int64_t i = 0; i < d; i += 4) {
            for (int l = 0; l < kLanes; ++l) {
              p0[l] += qh[i] * kb[i * kLanes + l];
              p1[l] += qh[i + 1] * kb[(i + 1) * kLanes + l];
              p2[l] += qh[i + 2] * kb[(i + 2) * kLanes + l];
              p3[l] += qh[i + 3] * kb[(i + 3) * kLanes + l];
            }
          }
          float* __restrict sh = s.data() + h * Lp + c * kLanes;
          for (int l = 0; l < kLanes; ++l) sh[l] = (p0[l] + p1[l]) + (p2[l] + p3[l]);
        }
      }
      std::fill(w.begin(), w.end(), 0.0f);
      for (int64_t h = 0; h < g; ++h) {
        float* __restrict sh = s.data() + h * Lp;
        // max and sum over t in 16 lanes (t mod 16), then across the lanes: a fixed order
        float lane_max[kLanes], lane_sum[kLanes];
        for (int l = 0; l < kLanes; ++l) lane_max[l] = -INFINITY, lane_sum[l] = 0.0f;
        const int64_t full = L / kLanes * kLanes;
        for (int64_t t = 0; t < full; t += kLanes)
          for (int l = 0; l < kLanes; ++l)
            lane_max[l] = sh[t + l] > lane_max[l] ? sh[t + l] : lane_max[l];
        for (int64_t t = full; t < L; ++t)
          lane_max[t - full] = sh[t] > lane_max[t - full] ? sh[t] : lane_max[t - full];
        float m = lane_max[0];
        for (int l = 1; l < kLanes; ++l) m = lane_max[l] > m ? lane_max[l] : m;
        for (int64_t t = 0; t < L; ++t) sh[t] = exp_nonpositive(sh[t] - m);
        for (int64_t t = 0; t < full; t += kLanes)
          for (int l = 0; l < kLanes; ++l) lane_sum[l] += sh[t + l];
        for (int64_t t = full; t < L; ++t) lane_sum[t - full] += sh[t];
        float total = 0.0f;
        for (int l = 0; l < kLanes; ++l) total += lane_sum[l];
        const float inv = 1.0f / total;
        // out[h, :] = sum_t (s[h, t] / total) V[t, :]: vectorized over the head's d values
        float* __restrict oh = w.data() + h * d;
        for (int64_t t = 0; t < L; ++t) {
          const float p = sh[t] * inv;
          const float* __restrict vrow = V + t * d;
          for (int64_t i = 0; i < d; ++i) oh[i] += p * vrow[i];
        }
        std::memcpy(op + (b * H + kh * g + h) * d, oh, d * sizeof(float));
      }
    }
  });
  return out;
}

TORCH_LIBRARY(cotaudit, m) { m.def("decode_attention", &decode_attention); }
