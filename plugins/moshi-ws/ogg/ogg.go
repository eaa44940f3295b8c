// Package ogg writes and reads the Ogg container (RFC 3533) as the Moshi server's
// websocket carries it: pages of one logical stream, cut into arbitrary byte fragments.
// It knows nothing about the codec inside; see package oggopus for that.
package ogg

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Header type flags of a page.
const (
	Continued = 0x01 // the page starts with the rest of a packet begun on the previous page
	First     = 0x02 // beginning of stream
	Last      = 0x04 // end of stream
)

const (
	headerSize  = 27
	maxSegments = 255
	// MaxPageSize is the largest possible page: header, full segment table, 255*255 bytes.
	MaxPageSize = headerSize + maxSegments + maxSegments*255
)

var capture = [4]byte{'O', 'g', 'g', 'S'}

// crcTable is the CRC-32 of RFC 3533: polynomial 0x04c11db7, MSB first, initial value 0,
// no final xor (not the reflected CRC of hash/crc32).
var crcTable = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

func crc(b []byte) uint32 {
	var c uint32
	for _, v := range b {
		c = c<<8 ^ crcTable[byte(c>>24)^v]
	}
	return c
}

// Writer builds the pages of one logical stream, numbering them in order.
type Writer struct {
	Serial uint32
	seq    uint32
}

// Page returns one page holding the given whole packets. granule is the codec's
// position at the end of the last packet; flags is a combination of First and Last.
// The packets must fit one page (at most 255 lacing values: about 64 KiB).
func (w *Writer) Page(packets [][]byte, granule int64, flags byte) ([]byte, error) {
	var lacing []byte
	size := 0
	for _, p := range packets {
		for n := len(p); ; n -= 255 {
			if n < 255 {
				lacing = append(lacing, byte(n))
				break
			}
			lacing = append(lacing, 255)
		}
		size += len(p)
	}
	if len(lacing) > maxSegments {
		return nil, fmt.Errorf("ogg: %d packets of %d bytes need %d segments, a page holds %d", len(packets), size, len(lacing), maxSegments)
	}
	page := make([]byte, headerSize, headerSize+len(lacing)+size)
	copy(page, capture[:])
	page[5] = flags &^ Continued
	binary.LittleEndian.PutUint64(page[6:], uint64(granule))
	binary.LittleEndian.PutUint32(page[14:], w.Serial)
	binary.LittleEndian.PutUint32(page[18:], w.seq)
	page[26] = byte(len(lacing))
	page = append(page, lacing...)
	for _, p := range packets {
		page = append(page, p...)
	}
	binary.LittleEndian.PutUint32(page[22:], crc(page))
	w.seq++
	return page, nil
}

// ErrCorrupt marks a stream that is not valid Ogg.
var ErrCorrupt = errors.New("ogg: corrupt stream")

// Reader reassembles packets from a stream that arrives in arbitrary fragments.
type Reader struct {
	buf     []byte // bytes of an incomplete page
	partial []byte // a packet continued on the next page
	inPart  bool
	pages   int
	serial  uint32
	nextSeq uint32
	err     error
}

// Write appends a fragment of the stream and returns the packets it completes, in
// order. After an error the stream is unusable and every later call returns it.
func (r *Reader) Write(fragment []byte) ([][]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.buf = append(r.buf, fragment...)
	var packets [][]byte
	for {
		n, err := r.page(&packets)
		if err != nil {
			r.err = err
			return packets, err
		}
		if n == 0 {
			return packets, nil
		}
		r.buf = r.buf[n:]
	}
}

// page consumes one complete page from the front of buf, appending its finished
// packets. It returns the page's size, or 0 when the page is not complete yet.
func (r *Reader) page(packets *[][]byte) (int, error) {
	b := r.buf
	for i := 0; i < len(b) && i < len(capture); i++ {
		if b[i] != capture[i] {
			return 0, fmt.Errorf("%w: page %d does not start with \"OggS\" (got % x)", ErrCorrupt, r.pages, b[:min(len(b), 4)])
		}
	}
	if len(b) < headerSize {
		return 0, nil
	}
	if b[4] != 0 {
		return 0, fmt.Errorf("%w: page %d has version %d, want 0", ErrCorrupt, r.pages, b[4])
	}
	nseg := int(b[26])
	if len(b) < headerSize+nseg {
		return 0, nil
	}
	lacing := b[headerSize : headerSize+nseg]
	size := headerSize + nseg
	for _, l := range lacing {
		size += int(l)
	}
	if len(b) < size {
		return 0, nil
	}
	page := b[:size]
	want := binary.LittleEndian.Uint32(page[22:])
	check := make([]byte, size)
	copy(check, page)
	clear(check[22:26])
	if got := crc(check); got != want {
		return 0, fmt.Errorf("%w: page %d has checksum %08x, its bytes give %08x", ErrCorrupt, r.pages, want, got)
	}
	flags := page[5]
	serial := binary.LittleEndian.Uint32(page[14:])
	seq := binary.LittleEndian.Uint32(page[18:])
	if r.pages == 0 {
		if flags&First == 0 {
			return 0, fmt.Errorf("%w: the first page does not mark the beginning of the stream", ErrCorrupt)
		}
		r.serial = serial
	} else if serial != r.serial {
		return 0, fmt.Errorf("%w: page %d belongs to stream %08x, not %08x (multiplexed streams are not supported)", ErrCorrupt, r.pages, serial, r.serial)
	} else if seq != r.nextSeq {
		return 0, fmt.Errorf("%w: page %d has sequence number %d, want %d (a page was lost)", ErrCorrupt, r.pages, seq, r.nextSeq)
	}
	if (flags&Continued != 0) != r.inPart {
		return 0, fmt.Errorf("%w: page %d continuation flag %v disagrees with the previous page", ErrCorrupt, r.pages, flags&Continued != 0)
	}
	r.nextSeq = seq + 1
	r.pages++
	data := page[headerSize+nseg:]
	for _, l := range lacing {
		r.partial = append(r.partial, data[:l]...)
		data = data[l:]
		if l < 255 {
			*packets = append(*packets, r.partial)
			r.partial = nil
		}
	}
	if nseg > 0 {
		r.inPart = lacing[nseg-1] == 255
	}
	return size, nil
}
