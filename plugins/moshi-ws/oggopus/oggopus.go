// Package oggopus encodes and decodes the Ogg/Opus streams (RFC 7845) of the Moshi
// websocket protocol: mono audio at one sample rate (24 kHz there), one stream per
// direction, sent as byte fragments. Opus itself is libopus through cgo.
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
// (the encoder's look-ahead; the value opusenc writes for the default settings).
const PreSkip = 312

const vendor = "duplexmpe moshi-ws"

// Encoder turns PCM into an Ogg/Opus byte stream.
type Encoder struct {
	rate    int
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
	return &Encoder{rate: rate, enc: enc, ogg: ogg.Writer{Serial: serial}}, nil
}

// Encode appends pcm and returns the stream bytes for every complete 20 ms packet so
// far: the header pages first, then one page per call (several for long input).
// Samples short of a packet wait for the next call.
func (e *Encoder) Encode(pcm []float32) ([]byte, error) {
	var out []byte
	if !e.started {
		head, err := e.ogg.Page([][]byte{Head(e.rate)}, 0, ogg.First)
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
		granule := PreSkip + e.samples*48000/int64(e.rate)
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
func Head(rate int) []byte {
	h := make([]byte, 19)
	copy(h, "OpusHead")
	h[8] = 1 // version
	h[9] = 1 // channels
	binary.LittleEndian.PutUint16(h[10:], PreSkip)
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
	rate    int
	dec     *opus.Decoder
	ogg     ogg.Reader
	packets int
	skip    int // samples still to drop, at rate
	pcm     []float32
}

// NewDecoder makes a decoder that outputs mono audio at rate (8, 12, 16, 24 or 48 kHz),
// whatever the stream's own source rate.
func NewDecoder(rate int) (*Decoder, error) {
	dec, err := opus.NewDecoder(rate, 1)
	if err != nil {
		return nil, fmt.Errorf("opus decoder at %d Hz: %w", rate, err)
	}
	return &Decoder{rate: rate, dec: dec, pcm: make([]float32, rate*120/1000)}, nil
}

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
		d.skip = int(binary.LittleEndian.Uint16(p[10:])) * d.rate / 48000
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
	drop := min(d.skip, n)
	d.skip -= drop
	return append([]float32(nil), out[drop:]...), nil
}
