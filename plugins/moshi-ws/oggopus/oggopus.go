// Package oggopus encodes and decodes the Ogg/Opus streams (RFC 7845) of the Moshi
// websocket protocol: mono audio at one sample rate (24 kHz there), one stream per
// direction, sent as byte fragments. Opus itself is libopus through cgo.
//
// The pre-skip a stream declares need not be its encoder's real delay: the Moshi and
// FLM-Audio servers (sphn and kaudio) declare 3840 samples at 48 kHz (80 ms) while
// libopus's look-ahead in their VoIP mode is 312 (6.5 ms). NewDecoderSkipping drops a
// given delay instead of the declared one.
package oggopus

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hraban/opus"

	"github.com/duplexmpe/duplexmpe/plugins/moshi-ws/ogg"
)

// PacketMillis is the duration of each Opus packet the Encoder writes (the Moshi web
// client also sends 20 ms packets).
const PacketMillis = 20

// PreSkip is the number of 48 kHz samples the Encoder declares the decoder must drop
// (the encoder's look-ahead; the value opusenc writes for the default settings). It is
// also libopus's look-ahead in VoIP mode at any rate (2.5 ms + 4 ms), the real delay of
// the Moshi servers' streams.
const PreSkip = 312

const vendor = "duplexmpe moshi-ws"

// Encoder turns PCM into an Ogg/Opus byte stream.
type Encoder struct {
	rate    int
	preSkip int // declared in OpusHead, at 48 kHz
	enc     *opus.Encoder
	ogg     ogg.Writer
	pending []float32
	started bool
	samples int64 // samples encoded, at rate
}

// NewEncoder makes an encoder for mono audio at rate (8, 12, 16, 24 or 48 kHz).
// serial names the Ogg stream.
func NewEncoder(rate int, serial uint32) (*Encoder, error) {
	enc, err := opus.NewEncoder(rate, 1, opus.AppVoIP)
	if err != nil {
		return nil, fmt.Errorf("opus encoder at %d Hz: %w", rate, err)
	}
	return &Encoder{rate: rate, preSkip: PreSkip, enc: enc, ogg: ogg.Writer{Serial: serial}}, nil
}

// DeclarePreSkip makes the stream declare n samples at 48 kHz of pre-skip instead of the
// real look-ahead (PreSkip), as the Moshi servers do; call it before the first Encode.
// The granule positions keep counting from n, as RFC 7845 wants.
func (e *Encoder) DeclarePreSkip(n uint16) { e.preSkip = int(n) }

// Encode appends pcm and returns the stream bytes for every complete 20 ms packet so
// far: the header pages first, then one page per call (several for long input).
// Samples short of a packet wait for the next call.
func (e *Encoder) Encode(pcm []float32) ([]byte, error) {
	var out []byte
	if !e.started {
		head, err := e.ogg.Page([][]byte{head(e.rate, e.preSkip)}, 0, ogg.First)
		if err != nil {
			return nil, err
		}
		tags, err := e.ogg.Page([][]byte{tagsPacket()}, 0, 0)
		if err != nil {
			return nil, err
		}
		out = append(append(out, head...), tags...)
		e.started = true
	}
	e.pending = append(e.pending, pcm...)
	n := e.rate * PacketMillis / 1000
	var packets [][]byte
	flush := func() error {
		if len(packets) == 0 {
			return nil
		}
		granule := int64(e.preSkip) + e.samples*48000/int64(e.rate)
		page, err := e.ogg.Page(packets, granule, 0)
		out = append(out, page...)
		packets = nil
		return err
	}
	for len(e.pending) >= n {
		buf := make([]byte, 1500)
		k, err := e.enc.EncodeFloat32(e.pending[:n], buf)
		if err != nil {
			return nil, fmt.Errorf("opus encode: %w", err)
		}
		packets = append(packets, buf[:k])
		e.pending = e.pending[n:]
		e.samples += int64(n)
		if len(packets) == 25 { // 25 packets of at most 1275 bytes fit one page
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	e.pending = append([]float32(nil), e.pending...)
	return out, nil
}

// Head is the OpusHead packet for a mono stream whose source rate is rate.
func Head(rate int) []byte { return head(rate, PreSkip) }

func head(rate, preSkip int) []byte {
	h := make([]byte, 19)
	copy(h, "OpusHead")
	h[8] = 1 // version
	h[9] = 1 // channels
	binary.LittleEndian.PutUint16(h[10:], uint16(preSkip))
	binary.LittleEndian.PutUint32(h[12:], uint32(rate))
	// output gain 0, channel mapping family 0
	return h
}

func tagsPacket() []byte {
	t := []byte("OpusTags")
	t = binary.LittleEndian.AppendUint32(t, uint32(len(vendor)))
	t = append(t, vendor...)
	return binary.LittleEndian.AppendUint32(t, 0) // no user comments
}

// ErrStream marks a stream that is Ogg but not a valid Opus stream.
var ErrStream = errors.New("oggopus: bad Opus stream")

// Decoder turns an Ogg/Opus byte stream, in arbitrary fragments, back into PCM.
type Decoder struct {
	rate     int
	dec      *opus.Decoder
	ogg      ogg.Reader
	packets  int
	override int // pre-skip to drop at 48 kHz instead of the declared one; < 0: the declared one
	declared int // the stream's declared pre-skip at 48 kHz; -1 before its OpusHead
	skip     int // samples still to drop, at rate
	decoded  int64
	pcm      []float32
}

// NewDecoder makes a decoder that outputs mono audio at rate (8, 12, 16, 24 or 48 kHz),
// whatever the stream's own source rate, and drops the pre-skip the stream declares.
func NewDecoder(rate int) (*Decoder, error) { return NewDecoderSkipping(rate, -1) }

// NewDecoderSkipping is NewDecoder dropping preSkip samples at 48 kHz from the start of
// the stream, whatever it declares; a negative preSkip drops the declared one.
func NewDecoderSkipping(rate, preSkip int) (*Decoder, error) {
	dec, err := opus.NewDecoder(rate, 1)
	if err != nil {
		return nil, fmt.Errorf("opus decoder at %d Hz: %w", rate, err)
	}
	return &Decoder{rate: rate, dec: dec, override: preSkip, declared: -1, pcm: make([]float32, rate*120/1000)}, nil
}

// Declared is the pre-skip the stream declared, in samples at 48 kHz; -1 before its
// OpusHead has arrived.
func (d *Decoder) Declared() int { return d.declared }

// Decoded is the number of samples (at the decoder's rate) decoded so far, the dropped
// pre-skip included: the stream's length on the encoder's clock.
func (d *Decoder) Decoded() int64 { return d.decoded }

// Decode appends a fragment of the stream and returns the samples it completes. After
// an error the stream is unusable.
func (d *Decoder) Decode(fragment []byte) ([]float32, error) {
	packets, err := d.ogg.Write(fragment)
	var out []float32
	for _, p := range packets {
		samples, perr := d.packet(p)
		if perr != nil {
			return out, perr
		}
		out = append(out, samples...)
	}
	return out, err
}

func (d *Decoder) packet(p []byte) ([]float32, error) {
	d.packets++
	switch d.packets {
	case 1:
		if len(p) < 19 || !bytes.HasPrefix(p, []byte("OpusHead")) {
			return nil, fmt.Errorf("%w: the first packet is not an OpusHead header", ErrStream)
		}
		if p[8]>>4 != 0 {
			return nil, fmt.Errorf("%w: OpusHead version %d is not supported", ErrStream, p[8])
		}
		if p[18] != 0 || p[9] < 1 || p[9] > 2 {
			return nil, fmt.Errorf("%w: %d channels with mapping family %d; want mono or stereo, family 0", ErrStream, p[9], p[18])
		}
		d.declared = int(binary.LittleEndian.Uint16(p[10:]))
		skip := d.declared
		if d.override >= 0 {
			skip = d.override
		}
		d.skip = skip * d.rate / 48000
		return nil, nil
	case 2:
		if !bytes.HasPrefix(p, []byte("OpusTags")) {
			return nil, fmt.Errorf("%w: the second packet is not an OpusTags header", ErrStream)
		}
		return nil, nil
	}
	n, err := d.dec.DecodeFloat32(p, d.pcm)
	if err != nil {
		return nil, fmt.Errorf("%w: audio packet %d: %v", ErrStream, d.packets-2, err)
	}
	out := d.pcm[:n]
	d.decoded += int64(n)
	drop := min(d.skip, n)
	d.skip -= drop
	return append([]float32(nil), out[drop:]...), nil
}
