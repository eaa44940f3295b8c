package explain

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/core/vad"
)

func mustParse(t *testing.T, src string) Input {
	t.Helper()
	in, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// Issue 11 item 10: explain merged pauses shorter than merge_pause while the VAD merges
// pauses up to merge_pause. A pause of exactly merge_pause (0.8 s) is one episode now;
// under the old rule it was two.
func TestPauseOfMergePauseMergesAsInTheVAD(t *testing.T) {
	in := mustParse(t, `{"turns":[{"label":"T","start":0,"end":5},{"label":"N1","start":9,"end":10}],
		"speech":[[5.6,6.0],[6.8,8.5],[9.5,9.55]]}`)
	res := Score(in)
	want := []timeline.Episode{{Start: 5.6, End: 8.5}}
	if !reflect.DeepEqual(res.Episodes, want) {
		t.Errorf("episodes %v; want %v (a pause of exactly merge_pause merges; [9.5, 9.55] is shorter than min_speech)", res.Episodes, want)
	}
	// Issue 24: the VAD's merge edge is 832 ms (26 whole 32 ms windows), so a recording
	// merges every pause shorter than that; explain split pauses between 0.8 and 0.832 s.
	for _, c := range []struct {
		second string
		n      int
	}{{"6.8000625", 1}, {"6.82", 1}, {"6.8319375", 1}, {"6.832", 2}, {"6.9", 2}} {
		in = mustParse(t, `{"turns":[{"label":"T","start":0,"end":5}],"speech":[[5.6,6.0],[`+c.second+`,8.5]]}`)
		if got := Score(in).Episodes; len(got) != c.n {
			t.Errorf("second region from %s: episodes %v; want %d", c.second, got, c.n)
		}
	}
}

// Score merges with core/vad's rule itself, for any merge_pause and min_speech.
func TestScoreUsesTheVADsMergeRule(t *testing.T) {
	for _, src := range []string{
		`{"turns":[{"label":"T","start":0,"end":5}],"speech":[[1,1.1],[1.3,2],[2.2,2.25],[3,3.2]],"protocol":{"merge_pause":0.2,"min_speech":0.1}}`,
		`{"turns":[{"label":"T","start":0,"end":5}],"speech":[[0.5,0.62],[1.42,1.5],[4,4.119]]}`,
	} {
		in := mustParse(t, src)
		v := protocol.DefaultVAD()
		v.MergePause, v.MinSpeech = in.MergePause, in.MinSpeech
		want := vad.MergeRegions(in.Speech, v)
		if want == nil {
			want = []timeline.Episode{}
		}
		if got := Score(in).Episodes; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: episodes %v; vad.MergeRegions gives %v", src, got, want)
		}
	}
}

func TestSpeechOutsideOneConversationIsRefused(t *testing.T) {
	for _, src := range []string{
		`{"turns":[{"label":"T","start":0,"end":5}],"speech":[[1, 1e9]]}`,
		`{"turns":[{"label":"T","start":0,"end":5}],"speech":[[-2, 1]]}`,
	} {
		if _, err := Parse([]byte(src)); err == nil || !strings.Contains(err.Error(), "speech[0]") {
			t.Errorf("%s: %v; want an error naming speech[0]", src, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../../examples/timelines/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"turns":[{"label":"N4_Q","start":0,"end":2},{"label":"N4_R","start":5,"end":6}],"speech":[[1,2]],"protocol":{"n4_gap":3}}`))
	f.Add([]byte(`{"turns":[{"label":"T","start":1e308,"end":1e309}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Errorf("error without a line: %v", err)
			}
			return
		}
		res := Score(in)
		if len(res.Turns) != len(in.Timeline.Turns) {
			t.Errorf("%d turns in, %d explained", len(in.Timeline.Turns), len(res.Turns))
		}
	})
}
