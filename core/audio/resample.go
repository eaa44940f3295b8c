package audio

import (
	"fmt"
	"math"
	"sync"
)

// Resampler design: band-limited interpolation with a Kaiser-windowed sinc, evaluated as a
// polyphase filter bank for the reduced ratio up/down. The low-pass cutoff sits at
// cutoffFraction of the lower of the two Nyquist frequencies, the window spans
// zeroCrossings zero crossings of the sinc on each side, and kaiserBeta sets the stopband
// (about -80 dB). Samples before the start and after the end count as zeros, and the
// output is aligned with the input (no delay): output sample n is the input signal at time
// n/to seconds.
const (
	cutoffFraction = 0.92
	zeroCrossings  = 24
	kaiserBeta     = 8.0
)

// Resample converts p to rate. The output has ceil(len * rate / p.Rate) samples. Equal
// rates return p unchanged (the same slice).
func Resample(p PCM, rate int) PCM {
	if p.Rate == rate {
		return p
	}
	r := NewResampler(p.Rate, rate)
	out := r.Process(p.Samples)
	out = append(out, r.Flush()...)
	return PCM{Samples: out, Rate: rate}
}

// AtRate is the sample at rate to that plays at the moment sample n plays at rate from
// (rounded to the nearest).
func AtRate(n int64, from, to int) int64 {
	if from == to {
		return n
	}
	return int64(math.Round(float64(n) * float64(to) / float64(from)))
}

// ResampledLength is how many samples n samples at rate from last at rate to, as
// Resample and a flushed Resampler make them: ceil(n * to / from).
func ResampledLength(n int64, from, to int) int64 {
	if from == to {
		return n
	}
	g := int64(gcd(from, to))
	up, down := int64(to)/g, int64(from)/g
	return (n*up + down - 1) / down
}

// Resampler converts a stream chunk by chunk. Feeding the chunks of a signal through
// Process and then calling Flush gives exactly the samples Resample gives on the whole.
// It is not safe for concurrent use.
type Resampler struct {
	bank *filterBank
	in   []float32 // input not yet consumed; in[0] is input sample base
	base int64
	seen int64 // input samples received
	next int64 // index of the next output sample
	// scanned: input positions below it have been looked at for sound; lastSound is the
	// last nonzero one among them (-1: none).
	scanned, lastSound int64
	done               bool
	same               bool // equal rates: pass samples through, as Resample does
}

// NewResampler converts from one rate to another; both must be positive. It panics on a
// rate below 1, which is a programming error (rates come from decoded files or constants).
func NewResampler(from, to int) *Resampler {
	if from < 1 || to < 1 {
		panic(fmt.Sprintf("audio: resampler rates must be positive (from %d to %d)", from, to))
	}
	if from == to {
		return &Resampler{same: true}
	}
	return &Resampler{bank: bankFor(from, to), lastSound: -1}
}

// Process consumes in and returns the output samples that no longer depend on future input.
func (r *Resampler) Process(in []float32) []float32 {
	if r.done {
		panic("audio: Resampler.Process after Flush")
	}
	if r.same {
		return append([]float32(nil), in...)
	}
	r.in = append(r.in, in...)
	r.seen += int64(len(in))
	return r.emit(false)
}

// Flush treats the input as ended (zeros after it) and returns the remaining output. The
// resampler cannot be used afterwards.
func (r *Resampler) Flush() []float32 {
	r.done = true
	if r.same {
		return nil
	}
	return r.emit(true)
}

func (r *Resampler) emit(final bool) []float32 {
	b := r.bank
	var limit int64 // outputs [next, limit) are produced now
	if final {
		limit = (r.seen*b.up + b.down - 1) / b.down
	} else {
		// Output n needs input up to floor(n*down/up) + b.right, which must be < seen.
		avail := r.seen - 1 - int64(b.right)
		if avail < 0 {
			return nil
		}
		limit = ((avail+1)*b.up-1)/b.down + 1
	}
	if limit <= r.next {
		return nil
	}
	out := make([]float32, limit-r.next)
	k := int64(len(b.taps) / int(b.up))
	// Each output is acc = 0 + h[0]*x[0] + h[1]*x[1] + ... in this order, in float32: the
	// outputs are the same bit for bit however they are computed below (the order of the
	// additions of one output never changes; TestResamplerExact holds them to the plain
	// loop). Two things make it faster without changing a bit:
	//   - an output whose inputs are all +0 or -0 is +0 (the sum of +0 and signed zeros is
	//     +0), so spans of digital silence cost no multiplications;
	//   - four outputs are summed side by side, so their additions overlap instead of
	//     waiting for each other.
	for n := r.next; n < limit; {
		lo, h := r.span(n, k)
		jlo, jhi := max(0, -lo), min(k, int64(len(r.in))-lo)
		if jlo >= jhi || r.silent(r.base+lo+jlo, r.base+lo+jhi) {
			n++ // out[...] is already +0
			continue
		}
		// Four interior outputs (every tap on input) at once, when there are four.
		if n+3 < limit && jlo == 0 && jhi == k {
			lo3, _ := r.span(n+3, k)
			if lo3+k <= int64(len(r.in)) {
				lo1, h1 := r.span(n+1, k)
				lo2, h2 := r.span(n+2, k)
				_, h3 := r.span(n+3, k)
				a0, a1, a2, a3 := dot4(h, h1, h2, h3, r.in[lo:lo+k], r.in[lo1:lo1+k], r.in[lo2:lo2+k], r.in[lo3:lo3+k])
				i := n - r.next
				out[i], out[i+1], out[i+2], out[i+3] = a0, a1, a2, a3
				n += 4
				continue
			}
		}
		var acc float32
		x := r.in[lo+jlo : lo+jhi]
		for j, c := range h[jlo:jhi] {
			acc += c * x[j]
		}
		out[n-r.next] = acc
		n++
	}
	r.next = limit
	// Drop input that no later output needs.
	if keep := (r.next*b.down)/b.up - int64(b.left); keep > r.base {
		drop := min(keep-r.base, int64(len(r.in)))
		r.in = append(r.in[:0], r.in[drop:]...)
		r.base += drop
	}
	return out
}

// span returns, for output n, the index into r.in that meets the first tap (it may be
// negative, or run past the end: input there is zero) and the taps of its phase.
func (r *Resampler) span(n, k int64) (int64, []float32) {
	b := r.bank
	pos := n * b.down
	phase := pos % b.up
	return pos/b.up - int64(b.left) - r.base, b.taps[phase*k : (phase+1)*k]
}

// silent reports whether the input samples at absolute positions [from, to) are all zero
// (+0 or -0). It scans each input sample once over the stream's life: spans only move
// forward, and the last nonzero position seen answers every span.
func (r *Resampler) silent(from, to int64) bool {
	if r.scanned < r.base {
		r.scanned = r.base
	}
	for ; r.scanned < to; r.scanned++ {
		if r.in[r.scanned-r.base] != 0 {
			r.lastSound = r.scanned
		}
	}
	return r.lastSound < from
}

// dot4 is four dot products of len(x0) terms, each summed from j = 0 up, side by side.
func dot4(h0, h1, h2, h3, x0, x1, x2, x3 []float32) (a0, a1, a2, a3 float32) {
	n := len(x0)
	h0, h1, h2, h3 = h0[:n], h1[:n], h2[:n], h3[:n]
	x1, x2, x3 = x1[:n], x2[:n], x3[:n]
	for j := range n {
		a0 += h0[j] * x0[j]
		a1 += h1[j] * x1[j]
		a2 += h2[j] * x2[j]
		a3 += h3[j] * x3[j]
	}
	return
}

// filterBank holds up phases of k taps each: taps[p*k+j] weighs input sample
// i0 - left + j for an output at input time i0 + p/up.
type filterBank struct {
	up, down    int64
	left, right int
	taps        []float32
}

var (
	banksMu sync.Mutex
	banks   = map[[2]int]*filterBank{}
)

func bankFor(from, to int) *filterBank {
	banksMu.Lock()
	defer banksMu.Unlock()
	key := [2]int{from, to}
	if b, ok := banks[key]; ok {
		return b
	}
	b := newFilterBank(from, to)
	banks[key] = b
	return b
}

func newFilterBank(from, to int) *filterBank {
	g := gcd(from, to)
	up, down := to/g, from/g
	// Cutoff in cycles per input sample, times two (1 = input Nyquist).
	fc := cutoffFraction * math.Min(1, float64(to)/float64(from))
	half := zeroCrossings / fc // half-length of the kernel in input samples
	left := int(math.Ceil(half)) - 1
	right := int(math.Ceil(half))
	k := left + right + 1
	taps := make([]float32, up*k)
	i0beta := besselI0(kaiserBeta)
	for p := range up {
		frac := float64(p) / float64(up)
		for j := range k {
			tau := frac - float64(j-left) // output time minus input sample time
			if math.Abs(tau) >= half {
				continue
			}
			x := tau / half
			w := besselI0(kaiserBeta*math.Sqrt(1-x*x)) / i0beta
			taps[p*k+j] = float32(fc * sinc(fc*tau) * w)
		}
	}
	return &filterBank{up: int64(up), down: int64(down), left: left, right: right, taps: taps}
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the modified Bessel function of the first kind, order 0 (power series).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 200; k++ {
		term *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
