package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hraban/opus"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/plugins/moshi-ws/oggopus"
)

// stubServer is a local stand-in for the Moshi server's /api/chat, faithful to its wire
// protocol: it sends the handshake byte, decodes the client's Ogg/Opus stream with
// libopusfile (not with this plugin's own decoder), works in 1920-sample frames at
// 24 kHz like Mimi, and answers every frame with one Ogg page of Opus audio (its input,
// delayed by delayFrames) plus, every textEvery frames, a text piece "p<k> ". Like the
// real servers (sphn, kaudio), its stream can declare more pre-skip than its encoder's
// delay, and it can be slow or stop answering.
type stubServer struct {
	*httptest.Server
	delayFrames     int
	textEvery       int
	closeAfter      int           // close the websocket after this many frames (0: never)
	rust            bool          // handshake with the Rust server's 8 version bytes
	declaredPreSkip uint16        // pre-skip the answers declare (0: the real delay, oggopus.PreSkip)
	answerDelay     time.Duration // sleep before each answer: a server slower than real time
	stallAfter      int           // stop answering (still reading) after this many answers (0: never)

	mu       sync.Mutex
	sessions []*session
}

// session is what the server saw and did in one conversation.
type session struct {
	mu       sync.Mutex
	input    []float32   // decoded input at 24 kHz, whole frames only
	arrivals []time.Time // when each audio message arrived
	texts    []string    // text pieces sent, in order
	frames   int         // frames decoded
	answers  int         // answers written
	sent     []float32   // the audio answered, as encoded
	done     chan struct{}
}

func newStubServer(t *testing.T, s *stubServer) *stubServer {
	s.Server = httptest.NewServer(http.HandlerFunc(s.chat))
	t.Cleanup(s.Close)
	return s
}

func (s *stubServer) url() string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + "/api/chat"
}

func (s *stubServer) lastSession(t *testing.T) *session {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) == 0 {
		t.Fatal("the server saw no conversation")
	}
	sess := s.sessions[len(s.sessions)-1]
	select {
	case <-sess.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's session did not end")
	}
	return sess
}

func (s *stubServer) chat(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/chat" {
		http.NotFound(w, r)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	sess := &session{done: make(chan struct{})}
	defer close(sess.done)
	s.mu.Lock()
	s.sessions = append(s.sessions, sess)
	s.mu.Unlock()

	ctx := r.Context()
	hs := []byte{kindHandshake}
	if s.rust {
		hs = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(hs, 7), 3)
	}
	if conn.Write(ctx, websocket.MessageBinary, hs) != nil {
		return
	}
	in, feed := io.Pipe()
	decoded := make(chan struct{})
	go func() {
		defer close(decoded)
		defer in.Close()
		s.answer(conn, sess, in)
	}()
	for {
		typ, msg, err := conn.Read(ctx)
		if err != nil {
			break
		}
		if typ != websocket.MessageBinary || len(msg) == 0 || msg[0] != kindAudio {
			continue
		}
		sess.mu.Lock()
		sess.arrivals = append(sess.arrivals, time.Now())
		sess.mu.Unlock()
		if _, err := feed.Write(msg[1:]); err != nil {
			break
		}
	}
	feed.Close()
	<-decoded
}

// answer decodes the input stream and sends the delayed echo, frame by frame.
func (s *stubServer) answer(conn *websocket.Conn, sess *session, in io.Reader) {
	stream, err := opus.NewStream(in) // libopusfile: it checks pages, CRCs and headers
	if err != nil {
		conn.Close(websocket.StatusUnsupportedData, "bad Ogg/Opus: "+err.Error())
		return
	}
	defer stream.Close()
	enc, err := oggopus.NewEncoder(rate, 77)
	if err != nil {
		panic(err)
	}
	if s.declaredPreSkip != 0 {
		enc.DeclarePreSkip(s.declaredPreSkip)
	}
	resample := audio.NewResampler(48000, rate)
	echo := make([]float32, s.delayFrames*frameSize)
	var pending []float32
	buf := make([]float32, 5760)
	for {
		n, err := stream.ReadFloat32(buf)
		if err != nil || n == 0 {
			return
		}
		pending = append(pending, resample.Process(buf[:n])...)
		for len(pending) >= frameSize {
			frame := pending[:frameSize]
			pending = pending[frameSize:]
			sess.mu.Lock()
			sess.input = append(sess.input, frame...)
			sess.frames++
			k := sess.frames
			sess.mu.Unlock()
			echo = append(echo, frame...)
			answer := echo[:frameSize]
			echo = echo[frameSize:]
			if s.stallAfter > 0 && k > s.stallAfter {
				continue
			}
			time.Sleep(s.answerDelay)
			page, err := enc.Encode(answer)
			if err != nil {
				panic(err)
			}
			ctx := context.Background()
			if conn.Write(ctx, websocket.MessageBinary, append([]byte{kindAudio}, page...)) != nil {
				return
			}
			sess.mu.Lock()
			sess.answers++
			sess.sent = append(sess.sent, answer...)
			sess.mu.Unlock()
			if s.textEvery > 0 && k%s.textEvery == 0 {
				piece := fmt.Sprintf("p%d ", k)
				sess.mu.Lock()
				sess.texts = append(sess.texts, piece)
				sess.mu.Unlock()
				if conn.Write(ctx, websocket.MessageBinary, append([]byte{kindText}, piece...)) != nil {
					return
				}
			}
			if s.closeAfter > 0 && k == s.closeAfter {
				conn.Close(websocket.StatusGoingAway, "stub server shutting down")
				return
			}
		}
	}
}
