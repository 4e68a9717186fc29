package bench

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records durations in nanoseconds in log-linear buckets, the
// layout of an HDR histogram with 8 significant bits: values below 256 ns
// are exact, larger ones fall in buckets 1/128 of their power of two wide,
// so a reported quantile is within 0.4 % of the true sample. Recording is
// one array increment; a histogram is not safe for concurrent use (give
// each goroutine its own and Merge them).
type Histogram struct {
	counts [numBuckets]uint64
	n      uint64
	sum    float64
	min    uint64
	max    uint64
}

const (
	subBits    = 8
	subCount   = 1 << subBits
	subHalf    = subCount / 2
	numBuckets = subCount + (64-subBits)*subHalf
)

func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits
	top := v >> uint(shift) // in [subHalf, subCount)
	return subCount + (shift-1)*subHalf + int(top-subHalf)
}

// bucketRange returns the smallest and largest value of bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < subCount {
		return uint64(i), uint64(i)
	}
	k := i - subCount
	shift := uint(k/subHalf + 1)
	top := uint64(k%subHalf + subHalf)
	lo = top << shift
	return lo, lo + (1 << shift) - 1
}

// Record adds one duration; negative ones count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(0)
	if d > 0 {
		v = uint64(d)
	}
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// Merge adds o's samples to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest sample, exactly.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Min is the smallest sample, exactly.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Mean is the average sample.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the sample at quantile q (0 < q ≤ 1), by the nearest-rank
// method, as the middle of its bucket (clamped to the exact min and max).
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	if rank > h.n {
		rank = h.n
	}
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(i)
			v := lo + (hi-lo)/2
			v = max(v, h.min)
			v = min(v, h.max)
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}

// latencyOf summarises h in microseconds.
func latencyOf(h *Histogram) Latency {
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	return Latency{P50: us(h.Quantile(0.5)), P90: us(h.Quantile(0.9)), P99: us(h.Quantile(0.99)),
		P999: us(h.Quantile(0.999)), Max: us(h.Max()), Mean: us(h.Mean())}
}
