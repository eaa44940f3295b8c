package audio

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// FLAC (RFC 9639), written and read here so the run store can keep audio losslessly at
// 16 bits in a fraction of the space. The encoder writes mono 16-bit streams of fixed
// 4096-sample blocks, each channel coded as a constant, a fixed predictor of order 0 to
// 4 with partitioned Rice residuals, or verbatim, whichever is smallest, with a
// STREAMINFO whose MD5 covers the samples, and an optional Vorbis comment block. The
// decoder reads any FLAC stream (every subframe type, wasted bits, stereo
// decorrelation, Rice and Rice2 with escapes), checks both CRCs of every frame and the
// MD5, and averages several channels to mono, as DecodeWAV does. flac_test.go checks
// both against Debian's flac, bit for bit.

// ErrFLAC marks input that is not a FLAC stream this package can read; errors.Is works
// on every error DecodeFLAC returns for bad input.
var ErrFLAC = errors.New("bad FLAC")

func flacErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFLAC}, args...)...)
}

const (
	flacBlockSize = 4096
	flacBits      = 16
	flacMaxRate   = 1<<20 - 1 // STREAMINFO holds the rate in 20 bits
)

// EncodeFLAC writes p as a mono 16-bit FLAC stream. Samples are quantised as EncodeWAV
// does (rounded to the nearest 1/32768, clipped to full scale), so a sample that is a
// multiple of 1/32768 in [-1, 1) comes back exactly. Each comment is a Vorbis comment
// "NAME=value".
func EncodeFLAC(w io.Writer, p PCM, comments ...string) error {
	if p.Rate < 1 || p.Rate > flacMaxRate {
		return fmt.Errorf("audio: cannot write a FLAC stream at %d Hz (1 to %d)", p.Rate, flacMaxRate)
	}
	n := len(p.Samples)
	if uint64(n) >= 1<<36 {
		return fmt.Errorf("audio: %d samples do not fit in a FLAC stream", n)
	}
	q := make([]int32, n)
	sum := md5.New()
	var b2 [2]byte
	for i, v := range p.Samples {
		s := quantize16(v)
		q[i] = int32(s)
		binary.LittleEndian.PutUint16(b2[:], uint16(s))
		sum.Write(b2[:])
	}

	var frames bytes.Buffer
	minFrame, maxFrame := 0, 0
	enc := frameEncoder{rate: p.Rate}
	for num, start := 0, 0; start < n; num, start = num+1, start+flacBlockSize {
		blk := q[start:min(start+flacBlockSize, n)]
		f := enc.frame(uint64(num), blk)
		if minFrame == 0 || len(f) < minFrame {
			minFrame = len(f)
		}
		maxFrame = max(maxFrame, len(f))
		frames.Write(f)
	}

	var out bytes.Buffer
	out.WriteString("fLaC")
	last := len(comments) == 0
	out.Write(metaHeader(0, last, 34))
	// STREAMINFO: block sizes, frame sizes, rate, channels-1, bits-1, total samples, MD5.
	var si [34]byte
	bs := uint16(flacBlockSize)
	if n < flacBlockSize {
		bs = uint16(max(n, 16)) // one short block; 16 is the least a stream may declare
	}
	binary.BigEndian.PutUint16(si[0:], bs)
	binary.BigEndian.PutUint16(si[2:], bs)
	put24(si[4:], uint32(minFrame))
	put24(si[7:], uint32(maxFrame))
	packed := uint64(p.Rate)<<44 | uint64(0)<<41 | uint64(flacBits-1)<<36 | uint64(n)
	binary.BigEndian.PutUint64(si[10:], packed)
	copy(si[18:], sum.Sum(nil))
	out.Write(si[:])
	if !last {
		vc := vorbisComment(comments)
		if len(vc) >= 1<<24 {
			return fmt.Errorf("audio: FLAC comments of %d bytes are too long", len(vc))
		}
		out.Write(metaHeader(4, true, len(vc)))
		out.Write(vc)
	}
	out.Write(frames.Bytes())
	_, err := w.Write(out.Bytes())
	return err
}

// WriteFLAC writes p to path as EncodeFLAC does, atomically and durably (core/atomicfile).
func WriteFLAC(path string, p PCM, comments ...string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return EncodeFLAC(w, p, comments...) })
}

func metaHeader(typ byte, last bool, size int) []byte {
	h := []byte{typ, byte(size >> 16), byte(size >> 8), byte(size)}
	if last {
		h[0] |= 0x80
	}
	return h
}

func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

func vorbisComment(comments []string) []byte {
	le := binary.LittleEndian
	vendor := "duplexmpe"
	b := le.AppendUint32(nil, uint32(len(vendor)))
	b = append(b, vendor...)
	b = le.AppendUint32(b, uint32(len(comments)))
	for _, c := range comments {
		b = le.AppendUint32(b, uint32(len(c)))
		b = append(b, c...)
	}
	return b
}

// frameEncoder encodes frames, reusing its scratch buffers.
type frameEncoder struct {
	rate int
	bw   bitWriter
	res  []int32
	best []int32
}

// sampleRateCode is the frame header's rate code, and the bits that follow the header
// when the rate is not in the table.
func sampleRateCode(rate int) (code uint64, extra uint64, extraBits uint) {
	table := map[int]uint64{88200: 1, 176400: 2, 192000: 3, 8000: 4, 16000: 5, 22050: 6, 24000: 7, 32000: 8, 44100: 9, 48000: 10, 96000: 11}
	switch c, ok := table[rate]; {
	case ok:
		return c, 0, 0
	case rate%1000 == 0 && rate/1000 < 256:
		return 12, uint64(rate / 1000), 8
	case rate < 1<<16:
		return 13, uint64(rate), 16
	case rate%10 == 0 && rate/10 < 1<<16:
		return 14, uint64(rate / 10), 16
	}
	return 0, 0, 0 // from STREAMINFO
}

func (e *frameEncoder) frame(num uint64, blk []int32) []byte {
	w := &e.bw
	w.reset()
	w.write(0xFFF8, 16)    // sync code, reserved bit, fixed block size
	var bsCode uint64 = 12 // 4096
	if len(blk) != flacBlockSize {
		bsCode = 7 // 16-bit (block size - 1) after the header
	}
	rc, rextra, rbits := sampleRateCode(e.rate)
	w.write(bsCode, 4)
	w.write(rc, 4)
	w.write(0, 4) // one channel
	w.write(4, 3) // 16 bits per sample
	w.write(0, 1)
	w.writeBytes(utf8Number(num))
	if bsCode == 7 {
		w.write(uint64(len(blk)-1), 16)
	}
	if rbits > 0 {
		w.write(rextra, rbits)
	}
	w.write(uint64(crc8(w.buf)), 8)
	e.subframe(blk)
	w.align()
	w.write(uint64(crc16(w.buf)), 16)
	return append([]byte(nil), w.buf...)
}

// subframe writes the smallest of a constant, a fixed predictor and verbatim samples.
func (e *frameEncoder) subframe(blk []int32) {
	w := &e.bw
	constant := true
	for _, v := range blk[1:] {
		if v != blk[0] {
			constant = false
			break
		}
	}
	if constant {
		w.write(0, 8) // padding bit, type 000000, no wasted bits
		w.writeSigned(int64(blk[0]), flacBits)
		return
	}
	bestOrder, bestBits := -1, len(blk)*flacBits // verbatim
	var bestPlan ricePlan
	for order := 0; order <= 4 && order < len(blk); order++ {
		e.res = fixedResidual(e.res[:0], blk, order)
		plan := planRice(e.res, len(blk), order)
		if b := order*flacBits + plan.bits; b < bestBits {
			bestOrder, bestBits, bestPlan = order, b, plan
			e.best = append(e.best[:0], e.res...)
		}
	}
	if bestOrder < 0 {
		w.write(1<<1, 8) // type 000001: verbatim
		for _, v := range blk {
			w.writeSigned(int64(v), flacBits)
		}
		return
	}
	w.write(uint64(8|bestOrder)<<1, 8) // type 001xxx: fixed predictor of order xxx
	for _, v := range blk[:bestOrder] {
		w.writeSigned(int64(v), flacBits)
	}
	w.write(0, 2) // Rice with 4-bit parameters
	w.write(uint64(bestPlan.order), 4)
	parts := 1 << bestPlan.order
	size := len(blk) >> bestPlan.order
	pos := 0
	for i := range parts {
		cnt := size
		if i == 0 {
			cnt -= bestOrder
		}
		k := bestPlan.params[i]
		w.write(uint64(k), 4)
		for _, r := range e.best[pos : pos+cnt] {
			u := zigzag(r)
			w.unary(u >> k)
			w.write(uint64(u)&(1<<k-1), k)
		}
		pos += cnt
	}
}

// fixedResidual appends the residual of blk under the fixed predictor of order order.
func fixedResidual(dst, blk []int32, order int) []int32 {
	for i := order; i < len(blk); i++ {
		var r int32
		switch order {
		case 0:
			r = blk[i]
		case 1:
			r = blk[i] - blk[i-1]
		case 2:
			r = blk[i] - 2*blk[i-1] + blk[i-2]
		case 3:
			r = blk[i] - 3*blk[i-1] + 3*blk[i-2] - blk[i-3]
		case 4:
			r = blk[i] - 4*blk[i-1] + 6*blk[i-2] - 4*blk[i-3] + blk[i-4]
		}
		dst = append(dst, r)
	}
	return dst
}

func zigzag(r int32) uint32 { return uint32(r<<1) ^ uint32(r>>31) }

// ricePlan is a partition order, a parameter per partition, and the residual's size in
// bits with them (the 6-bit method and order fields included).
type ricePlan struct {
	order  int
	params []uint
	bits   int
}

// planRice picks the partition order (0 to 8) and the Rice parameters (0 to 14) that
// code res, the residual of a block of n samples after order warm-up samples, in the
// fewest bits. The first partition holds n>>p - order residuals, the others n>>p.
func planRice(res []int32, n, order int) ricePlan {
	best := ricePlan{bits: math.MaxInt}
	for p := 0; p <= 8; p++ {
		if n%(1<<p) != 0 || n>>p < order || (p > 0 && n>>p == order) {
			break
		}
		plan := ricePlan{order: p, bits: 6}
		size, pos := n>>p, 0
		for i := range 1 << p {
			cnt := size
			if i == 0 {
				cnt -= order
			}
			k, b := riceParam(res[pos : pos+cnt])
			plan.params = append(plan.params, k)
			plan.bits += 4 + b
			pos += cnt
		}
		if plan.bits < best.bits {
			best = plan
		}
	}
	return best
}

// riceParam is the parameter that codes part in the fewest bits, and that many bits.
// The cost falls and then rises with k, so trying k around log2 of the mean suffices.
func riceParam(part []int32) (uint, int) {
	if len(part) == 0 {
		return 0, 0
	}
	var sum uint64
	for _, r := range part {
		sum += uint64(zigzag(r))
	}
	mean := sum / uint64(len(part))
	guess := 0
	if mean > 0 {
		guess = bits.Len64(mean) - 1
	}
	bestK, bestBits := uint(0), math.MaxInt
	for k := min(max(guess-1, 0), 14); k <= min(guess+2, 14); k++ {
		b := len(part) * (k + 1)
		for _, r := range part {
			b += int(zigzag(r) >> k)
		}
		if b < bestBits {
			bestK, bestBits = uint(k), b
		}
	}
	return bestK, bestBits
}

// utf8Number codes a frame number as FLAC does: UTF-8's scheme, extended to 36 bits.
func utf8Number(v uint64) []byte {
	if v < 0x80 {
		return []byte{byte(v)}
	}
	n := 2
	for v >= 1<<(5*n+1) {
		n++
	}
	b := make([]byte, n)
	for i := n - 1; i > 0; i-- {
		b[i] = 0x80 | byte(v&0x3F)
		v >>= 6
	}
	b[0] = byte(0xFF<<(8-n)) | byte(v)
	return b
}

type bitWriter struct {
	buf  []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) reset() { w.buf, w.acc, w.nacc = w.buf[:0], 0, 0 }

// write appends the low n bits of v (n <= 32).
func (w *bitWriter) write(v uint64, n uint) {
	w.acc = w.acc<<n | v&(1<<n-1)
	w.nacc += n
	for w.nacc >= 8 {
		w.nacc -= 8
		w.buf = append(w.buf, byte(w.acc>>w.nacc))
	}
}

func (w *bitWriter) writeSigned(v int64, n uint) { w.write(uint64(v), n) }

func (w *bitWriter) writeBytes(b []byte) {
	for _, c := range b {
		w.write(uint64(c), 8)
	}
}

// unary writes q zeros and a one.
func (w *bitWriter) unary(q uint32) {
	for q >= 32 {
		w.write(0, 32)
		q -= 32
	}
	w.write(1, uint(q)+1)
}

func (w *bitWriter) align() {
	if w.nacc > 0 {
		w.write(0, 8-w.nacc)
	}
}

// FLACInfo is what a FLAC stream's STREAMINFO says.
type FLACInfo struct {
	Rate, Channels, Bits int
	Samples              int64 // per channel; 0 when unknown
}

// StatFLAC reads the STREAMINFO of the FLAC file at path and checks, without decoding
// the stream, that it is complete: its last frame ends the file, both its CRCs hold, and
// it ends at the sample count STREAMINFO declares. A cut file is an error wrapping
// ErrFLAC, as a cut WAV is for StatWAV. (A bit flipped inside an earlier frame is found
// only by decoding: DecodeFLAC.)
func StatFLAC(path string) (FLACInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return FLACInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return FLACInfo{}, err
	}
	info, err := statFLAC(f, fi.Size())
	if err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

func statFLAC(r io.ReaderAt, size int64) (FLACInfo, error) {
	var b [42]byte
	if _, err := r.ReadAt(b[:], 0); err != nil {
		return FLACInfo{}, flacErrorf("too short for a FLAC header")
	}
	info, err := parseStreamInfo(b[:])
	if err != nil {
		return info, err
	}
	// The frames start after the last metadata block.
	pos := int64(4)
	for {
		var h [4]byte
		if _, err := r.ReadAt(h[:], pos); err != nil {
			return info, flacErrorf("truncated metadata")
		}
		pos += 4 + int64(h[1])<<16 | int64(h[2])<<8 | int64(h[3])
		if pos > size {
			return info, flacErrorf("truncated metadata block of type %d", h[0]&0x7F)
		}
		if h[0]&0x80 != 0 {
			break
		}
	}
	if pos == size {
		if info.Samples != 0 {
			return info, flacErrorf("truncated: STREAMINFO declares %d samples and the file has no frames", info.Samples)
		}
		return info, nil
	}
	if info.Samples == 0 {
		return info, nil // a stream of unknown length: nothing to check its end against
	}
	// The last frame is at most STREAMINFO's largest frame (when known) from the end.
	span := size - pos
	if maxFrame := int64(b[15])<<16 | int64(b[16])<<8 | int64(b[17]); maxFrame > 0 {
		span = min(span, maxFrame)
	} else {
		span = min(span, 1<<20)
	}
	tail := make([]byte, span)
	if _, err := r.ReadAt(tail, size-span); err != nil {
		return info, err
	}
	dec := frameDecoder{info: info}
	minBlock := int64(binary.BigEndian.Uint16(b[8:10]))
	for p := range len(tail) - 1 {
		if tail[p] != 0xFF || tail[p+1]&0xFE != 0xF8 {
			continue
		}
		chans := make([][]int32, info.Channels)
		n, err := dec.frame(tail[p:], chans)
		if err != nil || p+n != len(tail) {
			continue
		}
		first := int64(dec.number) // the first sample's number in a variable-block stream
		if !dec.variable {
			first *= minBlock
		}
		if end := first + int64(len(chans[0])); end != info.Samples {
			return info, flacErrorf("truncated: STREAMINFO declares %d samples, the last frame ends at sample %d", info.Samples, end)
		}
		return info, nil
	}
	return info, flacErrorf("truncated: the file does not end with a complete frame")
}

func parseStreamInfo(b []byte) (FLACInfo, error) {
	if string(b[:4]) != "fLaC" {
		return FLACInfo{}, flacErrorf("not a FLAC stream (starts with %q)", b[:min(4, len(b))])
	}
	if b[4]&0x7F != 0 || int(b[5])<<16|int(b[6])<<8|int(b[7]) != 34 {
		return FLACInfo{}, flacErrorf("the first metadata block is not a 34-byte STREAMINFO")
	}
	packed := binary.BigEndian.Uint64(b[18:26])
	info := FLACInfo{
		Rate:     int(packed >> 44),
		Channels: int(packed>>41&7) + 1,
		Bits:     int(packed>>36&31) + 1,
		Samples:  int64(packed & (1<<36 - 1)),
	}
	if info.Rate == 0 {
		return info, flacErrorf("STREAMINFO declares a sample rate of 0")
	}
	return info, nil
}

// ReadFile reads a WAV or a FLAC file, told apart by its first bytes, into mono PCM.
func ReadFile(path string) (PCM, error) {
	f, err := os.Open(path)
	if err != nil {
		return PCM{}, err
	}
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	f.Close()
	if err == nil && string(magic[:]) == "fLaC" {
		return ReadFLAC(path)
	}
	return ReadWAV(path)
}

// ReadFLAC reads a FLAC file into mono PCM (see DecodeFLAC); errors name the file.
func ReadFLAC(path string) (PCM, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PCM{}, err
	}
	p, _, err := DecodeFLAC(b)
	if err != nil {
		return PCM{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// DecodeFLAC decodes a whole FLAC stream into mono PCM (several channels are averaged)
// and returns its Vorbis comments. Every frame's CRCs, the sample count and the MD5 of
// STREAMINFO (when set) are checked: a damaged or truncated stream is an error wrapping
// ErrFLAC, never a shorter clip.
func DecodeFLAC(b []byte) (PCM, []string, error) {
	if len(b) < 42 {
		return PCM{}, nil, flacErrorf("too short for a FLAC header (%d bytes)", len(b))
	}
	info, err := parseStreamInfo(b)
	if err != nil {
		return PCM{}, nil, err
	}
	sumWant := b[26:42]
	pos := 4
	var comments []string
	for {
		if pos+4 > len(b) {
			return PCM{}, nil, flacErrorf("truncated metadata")
		}
		last, typ := b[pos]&0x80 != 0, b[pos]&0x7F
		size := int(b[pos+1])<<16 | int(b[pos+2])<<8 | int(b[pos+3])
		pos += 4
		if pos+size > len(b) {
			return PCM{}, nil, flacErrorf("truncated metadata block of type %d", typ)
		}
		if typ == 4 {
			if comments, err = parseVorbisComment(b[pos : pos+size]); err != nil {
				return PCM{}, nil, err
			}
		}
		pos += size
		if last {
			break
		}
	}

	dec := frameDecoder{info: info}
	var chans [][]int32
	for ch := 0; ch < info.Channels; ch++ {
		// STREAMINFO's count is a hint: a lying header must not allocate gigabytes.
		chans = append(chans, make([]int32, 0, min(info.Samples, int64(len(b))*64)))
	}
	for pos < len(b) {
		n, err := dec.frame(b[pos:], chans)
		if err != nil {
			return PCM{}, nil, fmt.Errorf("%w (frame at byte %d)", err, pos)
		}
		pos += n
	}
	total := int64(len(chans[0]))
	if info.Samples != 0 && total != info.Samples {
		return PCM{}, nil, flacErrorf("truncated: STREAMINFO declares %d samples, the frames hold %d", info.Samples, total)
	}
	if !bytes.Equal(sumWant, make([]byte, 16)) {
		if got := samplesMD5(chans, info.Bits); !bytes.Equal(got, sumWant) {
			return PCM{}, nil, flacErrorf("the samples' MD5 differs from STREAMINFO's: the stream is damaged")
		}
	}
	out := make([]float32, total)
	scale := 1 / float64(int64(1)<<(info.Bits-1)) / float64(info.Channels)
	for i := range out {
		var s int64
		for _, c := range chans {
			s += int64(c[i])
		}
		out[i] = float32(float64(s) * scale)
	}
	return PCM{Samples: out, Rate: info.Rate}, comments, nil
}

func parseVorbisComment(b []byte) ([]string, error) {
	le := binary.LittleEndian
	bad := flacErrorf("malformed Vorbis comment block")
	next := func() (string, bool) {
		if len(b) < 4 || uint64(le.Uint32(b)) > uint64(len(b)-4) {
			return "", false
		}
		n := le.Uint32(b)
		s := string(b[4 : 4+n])
		b = b[4+n:]
		return s, true
	}
	if _, ok := next(); !ok { // vendor
		return nil, bad
	}
	if len(b) < 4 {
		return nil, bad
	}
	count := le.Uint32(b)
	b = b[4:]
	var out []string
	for range count {
		s, ok := next()
		if !ok {
			return nil, bad
		}
		out = append(out, s)
	}
	return out, nil
}

// samplesMD5 is the MD5 FLAC's STREAMINFO holds: samples interleaved, each in
// ceil(bits/8) little-endian bytes.
func samplesMD5(chans [][]int32, bitsPerSample int) []byte {
	h := md5.New()
	width := (bitsPerSample + 7) / 8
	buf := make([]byte, 0, 8192)
	for i := range chans[0] {
		for _, c := range chans {
			v := uint32(c[i])
			for k := range width {
				buf = append(buf, byte(v>>(8*k)))
			}
		}
		if len(buf) >= 8000 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return h.Sum(nil)
}

type frameDecoder struct {
	info FLACInfo
	// Of the frame decoded last: its number (of a sample when variable, else of a
	// frame) and whether the stream has variable block sizes.
	number   uint64
	variable bool
}

// frame decodes one frame at the start of b, appending its samples to chans, and
// returns its length in bytes.
func (d *frameDecoder) frame(b []byte, chans [][]int32) (int, error) {
	r := &bitReader{b: b}
	if r.bits(15) != 0x7FFC {
		return 0, flacErrorf("lost frame sync")
	}
	d.variable = r.bits(1) == 1
	bsCode, rateCode := r.bits(4), r.bits(4)
	chCode, sizeCode := r.bits(4), r.bits(3)
	r.bits(1)
	num, err := r.utf8()
	if err != nil {
		return 0, err
	}
	d.number = num
	var bs int
	switch {
	case bsCode == 0:
		return 0, flacErrorf("reserved block size code")
	case bsCode == 1:
		bs = 192
	case bsCode <= 5:
		bs = 576 << (bsCode - 2)
	case bsCode == 6:
		bs = int(r.bits(8)) + 1
	case bsCode == 7:
		bs = int(r.bits(16)) + 1
	default:
		bs = 256 << (bsCode - 8)
	}
	switch rateCode {
	case 12:
		r.bits(8)
	case 13, 14:
		r.bits(16)
	case 15:
		return 0, flacErrorf("invalid sample rate code")
	}
	bps := d.info.Bits
	if sizeCode != 0 {
		bps = [...]int{0, 8, 12, 0, 16, 20, 24, 32}[sizeCode]
		if bps == 0 {
			return 0, flacErrorf("reserved sample size code")
		}
	}
	if r.err != nil {
		return 0, flacErrorf("truncated frame header")
	}
	hdrLen := r.pos / 8
	if crc := r.bits(8); r.err != nil || byte(crc) != crc8(b[:hdrLen]) {
		return 0, flacErrorf("frame header CRC mismatch")
	}
	nch := int(chCode) + 1
	if chCode >= 8 && chCode <= 10 {
		nch = 2
	} else if chCode > 10 {
		return 0, flacErrorf("reserved channel assignment")
	}
	if nch != d.info.Channels {
		return 0, flacErrorf("a frame has %d channels, STREAMINFO %d", nch, d.info.Channels)
	}
	sub := make([][]int64, nch)
	for ch := range nch {
		sbps := bps
		// The side channel of a decorrelated pair carries one more bit.
		if (chCode == 8 || chCode == 10) && ch == 1 || chCode == 9 && ch == 0 {
			sbps++
		}
		s, err := r.subframe(bs, sbps)
		if err != nil {
			return 0, err
		}
		sub[ch] = s
	}
	r.align()
	end := r.pos / 8
	if crc := r.bits(16); r.err != nil || uint16(crc) != crc16(b[:end]) {
		return 0, flacErrorf("frame CRC mismatch")
	}
	switch chCode {
	case 8: // left, side
		for i := range bs {
			sub[1][i] = sub[0][i] - sub[1][i]
		}
	case 9: // side, right
		for i := range bs {
			sub[0][i] += sub[1][i]
		}
	case 10: // mid, side
		for i := range bs {
			mid, side := sub[0][i]<<1|sub[1][i]&1, sub[1][i]
			sub[0][i], sub[1][i] = (mid+side)>>1, (mid-side)>>1
		}
	}
	for ch := range nch {
		for _, v := range sub[ch] {
			chans[ch] = append(chans[ch], int32(v))
		}
	}
	return end + 2, nil
}

type bitReader struct {
	b   []byte
	pos int // in bits
	err error
}

func (r *bitReader) bits(n int) uint64 {
	if r.err != nil {
		return 0
	}
	if r.pos+n > len(r.b)*8 {
		r.err = flacErrorf("truncated frame")
		return 0
	}
	var v uint64
	for n > 0 {
		byteIdx, off := r.pos/8, r.pos%8
		take := min(8-off, n)
		c := uint64(r.b[byteIdx]>>(8-off-take)) & (1<<take - 1)
		v = v<<take | c
		r.pos += take
		n -= take
	}
	return v
}

func (r *bitReader) signed(n int) int64 {
	if n == 0 {
		return 0
	}
	v := r.bits(n)
	return int64(v<<(64-n)) >> (64 - n)
}

func (r *bitReader) unary() uint64 {
	var q uint64
	for r.err == nil && r.bits(1) == 0 {
		q++
	}
	return q
}

func (r *bitReader) align() { r.pos = (r.pos + 7) &^ 7 }

// utf8 reads a frame or sample number in FLAC's extended UTF-8 coding.
func (r *bitReader) utf8() (uint64, error) {
	first := r.bits(8)
	n := bits.LeadingZeros8(^uint8(first))
	if n == 1 || n > 7 {
		return 0, flacErrorf("malformed frame number")
	}
	v := first
	if n > 1 {
		v &= 1<<(7-n) - 1
	}
	for i := 1; i < n; i++ {
		c := r.bits(8)
		if c&0xC0 != 0x80 {
			return 0, flacErrorf("malformed frame number")
		}
		v = v<<6 | c&0x3F
	}
	return v, r.err
}

func (r *bitReader) subframe(bs, bps int) ([]int64, error) {
	if r.bits(1) != 0 {
		return nil, flacErrorf("subframe padding bit set")
	}
	typ := r.bits(6)
	wasted := 0
	if r.bits(1) == 1 {
		wasted = int(r.unary()) + 1
	}
	bps -= wasted
	if bps < 1 {
		return nil, flacErrorf("more wasted bits than bits per sample")
	}
	out := make([]int64, bs)
	switch {
	case typ == 0:
		v := r.signed(bps)
		for i := range out {
			out[i] = v
		}
	case typ == 1:
		for i := range out {
			out[i] = r.signed(bps)
		}
	case typ >= 8 && typ <= 12:
		order := int(typ - 8)
		if order > bs {
			return nil, flacErrorf("predictor order %d above the block size %d", order, bs)
		}
		for i := range order {
			out[i] = r.signed(bps)
		}
		if err := r.residual(out, order); err != nil {
			return nil, err
		}
		coeffs := [][]int64{{}, {1}, {2, -1}, {3, -3, 1}, {4, -6, 4, -1}}[order]
		for i := order; i < bs; i++ {
			var p int64
			for j, c := range coeffs {
				p += c * out[i-1-j]
			}
			out[i] += p
		}
	case typ >= 32:
		order := int(typ-32) + 1
		if order > bs {
			return nil, flacErrorf("predictor order %d above the block size %d", order, bs)
		}
		for i := range order {
			out[i] = r.signed(bps)
		}
		prec := int(r.bits(4)) + 1
		if prec == 16 {
			return nil, flacErrorf("invalid LPC precision")
		}
		shift := r.signed(5)
		if shift < 0 {
			return nil, flacErrorf("negative LPC shift")
		}
		coeffs := make([]int64, order)
		for i := range coeffs {
			coeffs[i] = r.signed(prec)
		}
		if err := r.residual(out, order); err != nil {
			return nil, err
		}
		for i := order; i < bs; i++ {
			var p int64
			for j, c := range coeffs {
				p += c * out[i-1-j]
			}
			out[i] += p >> shift
		}
	default:
		return nil, flacErrorf("reserved subframe type %d", typ)
	}
	if r.err != nil {
		return nil, r.err
	}
	if wasted > 0 {
		for i := range out {
			out[i] <<= wasted
		}
	}
	return out, nil
}

// residual reads the partitioned Rice residual into out[order:].
func (r *bitReader) residual(out []int64, order int) error {
	method := r.bits(2)
	if method > 1 {
		return flacErrorf("reserved residual coding method")
	}
	paramBits, escape := 4, uint64(15)
	if method == 1 {
		paramBits, escape = 5, 31
	}
	porder := int(r.bits(4))
	bs := len(out)
	if bs%(1<<porder) != 0 || bs>>porder < order {
		return flacErrorf("Rice partition order %d does not fit a block of %d", porder, bs)
	}
	pos := order
	for i := range 1 << porder {
		cnt := bs >> porder
		if i == 0 {
			cnt -= order
		}
		k := r.bits(paramBits)
		if k == escape {
			n := int(r.bits(5))
			for j := range cnt {
				out[pos+j] = r.signed(n)
			}
		} else {
			for j := range cnt {
				u := r.unary()<<k | r.bits(int(k))
				out[pos+j] = int64(u>>1) ^ -int64(u&1)
			}
		}
		if r.err != nil {
			return r.err
		}
		pos += cnt
	}
	return nil
}

var crc8Table, crc16Table = func() ([256]byte, [256]uint16) {
	var t8 [256]byte
	var t16 [256]uint16
	for i := range 256 {
		c8 := byte(i)
		c16 := uint16(i) << 8
		for range 8 {
			if c8&0x80 != 0 {
				c8 = c8<<1 ^ 0x07
			} else {
				c8 <<= 1
			}
			if c16&0x8000 != 0 {
				c16 = c16<<1 ^ 0x8005
			} else {
				c16 <<= 1
			}
		}
		t8[i], t16[i] = c8, c16
	}
	return t8, t16
}()

func crc8(b []byte) byte {
	var c byte
	for _, x := range b {
		c = crc8Table[c^x]
	}
	return c
}

func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crc16Table[byte(c>>8)^x]
	}
	return c
}
