package main

import (
	"runtime"
	"sync"

	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
)

// maxConversations is how many conversations the cascade plays at once, the capability
// it declares: one per CPU core (a transcription takes one core), at most 8 (each
// decoder holds the model, about 50 MB).
var maxConversations = min(runtime.NumCPU(), 8)

// decoders lends PocketSphinx decoders, one utterance at a time each: a decoder is not
// safe for concurrent use, so conversations played side by side would otherwise take
// turns on one. Decoders are loaded when first needed, up to size. The transcript does
// not depend on which decoder made it (each utterance starts from the decoder's fresh
// state, plugins/pocketsphinx/sphinx), so the pool changes CPU use and nothing else.
type decoders struct {
	model sphinx.Model
	slots chan struct{} // one per decoder lent or loadable

	mu     sync.Mutex
	free   []*sphinx.Decoder
	all    []*sphinx.Decoder
	closed bool
}

// newDecoders starts a pool of at most size decoders of first's model, with first in it.
func newDecoders(first *sphinx.Decoder, size int) *decoders {
	return &decoders{model: first.Model(), slots: make(chan struct{}, max(size, 1)),
		free: []*sphinx.Decoder{first}, all: []*sphinx.Decoder{first}}
}

// words transcribes samples on a free decoder, waiting for one when all are busy, and
// returns the words with their times (a spotter's: its detections).
func (p *decoders) words(samples []float32) ([]sphinx.Word, error) {
	p.slots <- struct{}{}
	defer func() { <-p.slots }()
	d, err := p.take()
	if err != nil {
		return nil, err
	}
	defer p.give(d)
	return d.TranscribeWords(samples)
}

func (p *decoders) take() (*sphinx.Decoder, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, sphinx.ErrClosed
	}
	if n := len(p.free); n > 0 {
		d := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return d, nil
	}
	p.mu.Unlock()
	d, err := sphinx.Load(p.model)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		d.Close()
		return nil, sphinx.ErrClosed
	}
	p.all = append(p.all, d)
	return d, nil
}

func (p *decoders) give(d *sphinx.Decoder) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, d)
}

// close frees every decoder; a transcription running now ends with sphinx.ErrClosed or
// its transcript, and later ones fail with sphinx.ErrClosed.
func (p *decoders) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, d := range p.all {
		d.Close()
	}
	p.all, p.free = nil, nil
}
