package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/duplexmpe/duplexmpe/internal/protocol"
	"github.com/duplexmpe/duplexmpe/internal/protoconv"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/wire"
)

// Model returns the plugin's model over gRPC, or an error if it does not serve one.
func (c *Client) Model() (sdk.Model, error) {
	if err := c.serves(sdk.KindModel); err != nil {
		return nil, err
	}
	return modelClient{c}, nil
}

// TTS returns the plugin's TTS over gRPC, or an error if it does not serve one.
func (c *Client) TTS() (sdk.TTS, error) {
	if err := c.serves(sdk.KindTTS); err != nil {
		return nil, err
	}
	return ttsClient{c}, nil
}

// ASR returns the plugin's ASR over gRPC, or an error if it does not serve one.
func (c *Client) ASR() (sdk.ASR, error) {
	if err := c.serves(sdk.KindASR); err != nil {
		return nil, err
	}
	return asrClient{c}, nil
}

// Judge returns the plugin's judge over gRPC, or an error if it does not serve one.
func (c *Client) Judge() (sdk.Judge, error) {
	if err := c.serves(sdk.KindJudge); err != nil {
		return nil, err
	}
	return judgeClient{c}, nil
}

// LLM returns the plugin's LLM over gRPC, or an error if it does not serve one.
func (c *Client) LLM() (sdk.LLM, error) {
	if err := c.serves(sdk.KindLLM); err != nil {
		return nil, err
	}
	return llmClient{c}, nil
}

// Kinds are the kinds the plugin serves (from its Describe at start).
func (c *Client) Kinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.kinds)
}

func (c *Client) serves(kind string) error {
	kinds := c.Kinds()
	if slices.Contains(kinds, kind) {
		return nil
	}
	served := "nothing"
	if len(kinds) > 0 {
		served = strings.Join(kinds, ", ")
	}
	return fmt.Errorf("plugin %q does not serve kind %q (it serves %s); use a %s plugin here", c.spec.Name, kind, served, kind)
}

type modelClient struct{ c *Client }

// Start opens one Converse stream. The stream outlives ctx (which bounds only the
// start); each Step has its own ctx, and Close ends the stream. A start that gets no
// answer within Spec.ConversationStartTimeout (or before ctx's deadline) means the
// plugin is wedged: its process group is killed and a *DeadlineError returned.
func (m modelClient) Start(ctx context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	conn, pc, err := m.c.process()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	timeout := m.c.spec.conversationStartTimeout()
	wd := newWatchdog(timeout, cancel)
	defer wd.stop()
	op := fmt.Sprintf("Model.Start (conversation %q)", req.ID)
	fail := func(err error) (sdk.Conversation, error) {
		cancel()
		if dl := m.c.missedDeadline(ctx, pc, op, "conversation_start_timeout", timeout, wd.stop()); dl != nil {
			return nil, dl
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, m.c.callError("Model.Start", err)
	}
	stream, err := protocol.NewModelClient(conn).Converse(sctx)
	if err != nil {
		return fail(err)
	}
	if err := stream.Send(protoconv.StartToProto(req)); err != nil {
		return fail(recvErr(stream, err))
	}
	out, err := stream.Recv()
	if err != nil {
		return fail(err)
	}
	if wd.stop() {
		// The answer came as the deadline passed: the stream is cancelled already.
		return fail(context.DeadlineExceeded)
	}
	ready := out.GetReady()
	if ready == nil {
		return fail(fmt.Errorf("protocol violation: the first reply must be ready, got %s", describeOutput(out)))
	}
	f := protoconv.FormatFromProto(ready)
	if f.InputRate <= 0 || f.OutputRate <= 0 || f.FrameSize <= 0 {
		return fail(fmt.Errorf("protocol violation: ready has input rate %d, output rate %d, frame size %d; all must be positive",
			f.InputRate, f.OutputRate, f.FrameSize))
	}
	return &conversation{c: m.c, pc: pc, id: req.ID, stream: stream, cancel: cancel, format: f}, nil
}

// recvErr: a failed Send on a bidi stream hides the real status, which Recv returns.
func recvErr(stream grpc.BidiStreamingClient[protocol.ModelInput, protocol.ModelOutput], sendErr error) error {
	if !errors.Is(sendErr, io.EOF) {
		return sendErr
	}
	if _, err := stream.Recv(); err != nil {
		return err
	}
	return sendErr
}

func describeOutput(out *protocol.ModelOutput) string {
	switch m := out.GetMsg().(type) {
	case *protocol.ModelOutput_Frame:
		return fmt.Sprintf("frame %d", m.Frame.GetIndex())
	case *protocol.ModelOutput_Ready:
		return "ready"
	}
	return "an empty message"
}

type conversation struct {
	c      *Client
	pc     *plugin.Client // the process the stream is on
	id     string
	stream grpc.BidiStreamingClient[protocol.ModelInput, protocol.ModelOutput]
	cancel context.CancelFunc
	format sdk.Format

	mu     sync.Mutex
	next   uint64
	text   int // bytes of text the model sent so far (MaxConversationText)
	buf    []byte
	err    error // sticky: a broken stream stays broken
	closed bool
}

func (cv *conversation) Format() sdk.Format { return cv.format }

func (cv *conversation) Step(ctx context.Context, frame []float32) (sdk.Output, error) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.closed {
		return sdk.Output{}, fmt.Errorf("plugin %q: conversation %q is closed", cv.c.spec.Name, cv.id)
	}
	if cv.err != nil {
		return sdk.Output{}, cv.err
	}
	if len(frame) != cv.format.FrameSize {
		return sdk.Output{}, fmt.Errorf("plugin %q: conversation %q: frame %d has %d samples; the model declared frames of %d samples",
			cv.c.spec.Name, cv.id, cv.next, len(frame), cv.format.FrameSize)
	}
	if err := ctx.Err(); err != nil {
		return sdk.Output{}, err // nothing sent: the conversation stays usable
	}
	if ctx.Done() != nil {
		// Cancelling mid-frame cancels the stream: the conversation is then broken.
		stop := context.AfterFunc(ctx, cv.cancel)
		defer stop()
	}
	timeout := cv.c.spec.frameTimeout()
	wd := newWatchdog(timeout, cv.cancel)
	cv.buf = wire.AppendPCM(cv.buf[:0], frame)
	idx := cv.next
	out, err := cv.roundTrip(idx)
	fired := wd.stop()
	if fired && err == nil {
		err = context.DeadlineExceeded // the reply came as the deadline passed
	}
	if err != nil {
		op := fmt.Sprintf("Model.Step (conversation %q, frame %d)", cv.id, idx)
		if dl := cv.c.missedDeadline(ctx, cv.pc, op, "frame_timeout", timeout, fired); dl != nil {
			cv.err = dl
		} else {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			cv.err = cv.c.callError(op, err)
		}
		cv.cancel()
		return sdk.Output{}, cv.err
	}
	cv.next++
	if err := cv.checkText(idx, out.Text); err != nil {
		cv.err = err
		cv.cancel()
		return sdk.Output{}, err
	}
	return out, nil
}

// The bounds of a model's text channel, like those of its audio (a frame's reply) and
// its log (Spec.LogLimit): a model's text is what it says, a few words a frame. Without
// them a plugin sending 1 MB a frame took the host to 2 GB and a 210 MB text.json.
const (
	MaxFrameText        = 64 << 10 // bytes of text in one frame's reply
	MaxConversationText = 1 << 20  // bytes of text over one conversation
)

// checkText fails the conversation whose model sent more text than the bounds allow,
// naming the plugin, the conversation and the frame.
func (cv *conversation) checkText(idx uint64, text string) error {
	cv.text += len(text)
	var what string
	switch {
	case len(text) > MaxFrameText:
		what = fmt.Sprintf("%d bytes of text in one frame (at most %d)", len(text), MaxFrameText)
	case cv.text > MaxConversationText:
		what = fmt.Sprintf("more than %d bytes of text in the conversation (%d so far)", MaxConversationText, cv.text)
	default:
		return nil
	}
	return fmt.Errorf("plugin %q: Model.Step (conversation %q, frame %d): the model sent %s; the host refuses it and fails the conversation: a model's text channel carries what it says, a few words a frame",
		cv.c.spec.Name, cv.id, idx, what)
}

func (cv *conversation) roundTrip(idx uint64) (sdk.Output, error) {
	if err := cv.stream.Send(&protocol.ModelInput{Msg: &protocol.ModelInput_Frame{Frame: &protocol.InputFrame{Index: idx, Pcm: cv.buf}}}); err != nil {
		return sdk.Output{}, recvErr(cv.stream, err)
	}
	msg, err := cv.stream.Recv()
	if err != nil {
		return sdk.Output{}, err
	}
	f := msg.GetFrame()
	if f == nil {
		return sdk.Output{}, fmt.Errorf("protocol violation: expected the reply to frame %d, got %s", idx, describeOutput(msg))
	}
	if f.GetIndex() != idx {
		return sdk.Output{}, fmt.Errorf("protocol violation: reply index %d, expected %d", f.GetIndex(), idx)
	}
	out, err := protoconv.OutputFromProto(f)
	if err != nil {
		return sdk.Output{}, fmt.Errorf("protocol violation: reply to frame %d: %v", idx, err)
	}
	if err := checkOutputAudio(out.Samples); err != nil {
		return sdk.Output{}, fmt.Errorf("reply to frame %d: %w", idx, err)
	}
	return out, nil
}

// watchdog cancels a call's stream when the call runs past its timeout.
type watchdog struct {
	timer *time.Timer
	once  sync.Once
	fired bool
}

func newWatchdog(timeout time.Duration, cancel func()) *watchdog {
	return &watchdog{timer: time.AfterFunc(timeout, cancel)}
}

// stop ends the watch and reports whether the timeout fired (the stream is then
// cancelled); later calls report the same.
func (w *watchdog) stop() bool {
	w.once.Do(func() { w.fired = !w.timer.Stop() })
	return w.fired
}

// MaxOutputAmplitude bounds the samples a model may send: audio is float in [-1, 1],
// and a little overshoot (resampling, a hot mix) is tolerated. Anything beyond it is a
// plugin bug, typically integer samples sent unscaled.
const MaxOutputAmplitude = 4

// checkOutputAudio refuses model audio that is not a finite number or is far outside
// [-1, 1]: played on, it would reach the VAD and the recording as if it were speech.
func checkOutputAudio(x []float32) error {
	for i, v := range x {
		switch {
		case math.IsNaN(float64(v)) || math.IsInf(float64(v), 0):
			return fmt.Errorf("the model sent a non-finite sample (%v) at index %d; a model's audio must be finite numbers in [-1, 1]", v, i)
		case v > MaxOutputAmplitude || v < -MaxOutputAmplitude:
			return fmt.Errorf("the model sent sample %g at index %d, far outside [-1, 1] (the host refuses magnitudes over %d); "+
				"scale the plugin's audio to [-1, 1] (integer samples divided by 32768)", v, i, MaxOutputAmplitude)
		}
	}
	return nil
}

// Close sends end and waits for the plugin to close the stream (its Conversation.Close
// has then run). It is idempotent.
func (cv *conversation) Close() error {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if cv.closed {
		return nil
	}
	cv.closed = true
	defer cv.cancel()
	if cv.err != nil {
		return nil // already reported by Step
	}
	op := fmt.Sprintf("Model.Close (conversation %q)", cv.id)
	// A plugin that never closes the stream is as wedged as one that never answers a
	// frame, and is bounded by the same timeout.
	timeout := cv.c.spec.frameTimeout()
	wd := newWatchdog(timeout, cv.cancel)
	defer wd.stop()
	failed := func(err error) error {
		if dl := cv.c.missedDeadline(context.Background(), cv.pc, op, "frame_timeout", timeout, wd.stop()); dl != nil {
			return dl
		}
		return cv.c.callError(op, err)
	}
	if err := cv.stream.Send(&protocol.ModelInput{Msg: &protocol.ModelInput_End{End: &protocol.ConversationEnd{}}}); err != nil {
		if err = recvErr(cv.stream, err); !errors.Is(err, io.EOF) {
			return failed(err)
		}
		return nil
	}
	_ = cv.stream.CloseSend()
	msg, err := cv.stream.Recv()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return failed(err)
	}
	return cv.c.callError(op, fmt.Errorf("protocol violation: %s after end", describeOutput(msg)))
}

// call makes one unary call of a service (TTS, ASR, judge, LLM) on the current process,
// bounded by Spec.CallTimeout: a call that gets no answer in time (or before ctx's
// deadline) means the plugin is wedged, so its process group is killed (Exited then
// reports true, and Restart starts it again) and a *DeadlineError naming call_timeout is
// returned. Any other failure is a *CallError naming op.
func (c *Client) call(ctx context.Context, op string, do func(ctx context.Context, conn *grpc.ClientConn) error) error {
	conn, pc, err := c.process()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timeout := c.spec.callTimeout()
	wd := newWatchdog(timeout, cancel)
	err = do(cctx, conn)
	fired := wd.stop()
	if fired && err == nil {
		err = context.DeadlineExceeded // the answer came as the deadline passed
	}
	if err == nil {
		return nil
	}
	if dl := c.missedDeadline(ctx, pc, op, "call_timeout", timeout, fired); dl != nil {
		return dl
	}
	return c.callError(op, err)
}

type ttsClient struct{ c *Client }

func (t ttsClient) Voices(ctx context.Context) ([]sdk.Voice, error) {
	var resp *protocol.ListVoicesResponse
	err := t.c.call(ctx, "TTS.Voices", func(ctx context.Context, conn *grpc.ClientConn) (err error) {
		resp, err = protocol.NewTTSClient(conn).ListVoices(ctx, &protocol.ListVoicesRequest{})
		return err
	})
	if err != nil {
		return nil, err
	}
	return protoconv.VoicesFromProto(resp), nil
}

func (t ttsClient) Synthesize(ctx context.Context, text, voice string) (sdk.Audio, error) {
	var resp *protocol.SynthesizeResponse
	err := t.c.call(ctx, "TTS.Synthesize", func(ctx context.Context, conn *grpc.ClientConn) (err error) {
		resp, err = protocol.NewTTSClient(conn).Synthesize(ctx, &protocol.SynthesizeRequest{Text: text, Voice: voice})
		return err
	})
	if err != nil {
		return sdk.Audio{}, err
	}
	a, err := protoconv.AudioFromProto(resp.GetAudio())
	if err != nil {
		return sdk.Audio{}, t.c.callError("TTS.Synthesize", fmt.Errorf("protocol violation: %v", err))
	}
	return a, nil
}

type asrClient struct{ c *Client }

func (a asrClient) Transcribe(ctx context.Context, clip sdk.Audio, language string) (string, error) {
	var resp *protocol.TranscribeResponse
	err := a.c.call(ctx, "ASR.Transcribe", func(ctx context.Context, conn *grpc.ClientConn) (err error) {
		resp, err = protocol.NewASRClient(conn).Transcribe(ctx, &protocol.TranscribeRequest{Audio: protoconv.AudioToProto(clip), Language: language})
		return err
	})
	if err != nil {
		return "", err
	}
	return resp.GetText(), nil
}

type judgeClient struct{ c *Client }

func (j judgeClient) JudgeAnswer(ctx context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	var v *protocol.Verdict
	err := j.c.call(ctx, "Judge.JudgeAnswer", func(ctx context.Context, conn *grpc.ClientConn) (err error) {
		v, err = protocol.NewJudgeClient(conn).JudgeAnswer(ctx, protoconv.AnswerQueryToProto(q))
		return err
	})
	if err != nil {
		return sdk.Verdict{}, err
	}
	return protoconv.VerdictFromProto(v), nil
}

func (j judgeClient) ClassifySpeech(ctx context.Context, q sdk.SpeechQuery) (sdk.Verdict, error) {
	var v *protocol.Verdict
	err := j.c.call(ctx, "Judge.ClassifySpeech", func(ctx context.Context, conn *grpc.ClientConn) (err error) {
		v, err = protocol.NewJudgeClient(conn).ClassifySpeech(ctx, protoconv.SpeechQueryToProto(q))
		return err
	})
	if err != nil {
		return sdk.Verdict{}, err
	}
	return protoconv.VerdictFromProto(v), nil
}

type llmClient struct{ c *Client }

func (l llmClient) Complete(ctx context.Context, r sdk.CompletionRequest) (sdk.Completion, error) {
	var resp *protocol.CompleteResponse
	err := l.c.call(ctx, "LLM.Complete", func(ctx context.Context, conn *grpc.ClientConn) (err error) {
		resp, err = protocol.NewLLMClient(conn).Complete(ctx, protoconv.CompletionRequestToProto(r))
		return err
	})
	if err != nil {
		return sdk.Completion{}, err
	}
	return protoconv.CompletionFromProto(resp), nil
}
