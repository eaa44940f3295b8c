package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

func init() { register(newBuildCmd) }

func newBuildCmd(st *State) *cobra.Command {
	var vars []string
	var only string
	cmd := &cobra.Command{
		Use:   "build FILE.hcl",
		Short: "Build the run file's datasets: write or generate the scripts, synthesise every turn, save",
		Long: "Build every dataset block of a run file (or only --dataset NAME): read the scenarios\n" +
			"(or generate them procedurally or with an llm plugin), synthesise each distinct turn\n" +
			"once through the tts plugin into <out>/clips/, and write <out>/dataset.json and\n" +
			"<out>/scenarios.jsonl. Clips already built are reused, so a rebuild synthesises\n" +
			"nothing and an interrupted build resumes where it stopped.",
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			if len(f.Datasets) == 0 {
				return fmt.Errorf("%s has no dataset block; add dataset \"name\" { scenarios = ..., tts = plugin.x }", args[0])
			}
			found := false
			for _, ds := range f.Datasets {
				if only != "" && ds.Name != only {
					continue
				}
				found = true
				if _, err := BuildDataset(st, f, ds); err != nil {
					return err
				}
			}
			if !found {
				return UsageErrorf("--dataset %q: %s has no such dataset block", only, args[0])
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().StringVar(&only, "dataset", "", "build only this dataset block")
	return cmd
}

// BuildDataset builds one dataset block of a checked run file: it is what `build` does
// for each block, and what `run` can call before evaluating. Progress and a summary go
// to st's stderr and stdout; problems in the scripts are printed with file and line and
// returned as ErrReported.
func BuildDataset(st *State, f *config.File, ds *config.Dataset) (*dataset.Dataset, error) {
	ctx := st.Ctx
	logger := hclog.New(&hclog.LoggerOptions{Name: "duplexmpe", Output: st.Stderr, Level: hclog.Warn})
	scripts, gen, err := datasetScripts(st, ctx, f, ds, logger)
	if err != nil {
		return nil, err
	}

	block := f.Plugin(ds.TTS)
	if block == nil {
		return nil, fmt.Errorf("dataset %q: tts plugin %q is not declared", ds.Name, ds.TTS)
	}
	c, err := startConfigured(st, ctx, f, block, logger)
	if err != nil {
		return nil, err
	}
	defer c.Kill()
	info, err := c.Describe(ctx)
	if err != nil {
		return nil, err
	}
	tts, err := c.TTS()
	if err != nil {
		return nil, fmt.Errorf("dataset %q: plugin %q: %w", ds.Name, ds.TTS, err)
	}
	preamble := ""
	if ds.Preamble != "" && ds.Preamble != "default" {
		raw, err := os.ReadFile(ds.Preamble)
		if err != nil {
			return nil, fmt.Errorf("dataset %q: preamble: %w", ds.Name, err)
		}
		preamble = strings.Join(strings.Fields(string(raw)), " ")
		if preamble == "" {
			return nil, fmt.Errorf("dataset %q: preamble file %s is empty", ds.Name, ds.Preamble)
		}
	}
	spec := construct.BuildSpec{
		Name: ds.Name, Out: ds.Out, Scenarios: scripts, Generator: gen,
		TTS:      dataset.TTSInfo{Plugin: ds.TTS, Name: info.Name, Version: info.Version, Identity: info.Identity},
		Voices:   ds.Voices,
		Preamble: preamble,
	}
	bar := newProgressBar(ctx, st.Stderr, ds.Name)
	d, rep, err := construct.Build(ctx, spec, tts, bar)
	bar.finish(err == nil)
	if err != nil {
		var ve *construct.ViolationsError
		if errors.As(err, &ve) {
			for _, v := range ve.Violations {
				fmt.Fprintln(st.Stderr, v.String())
			}
			return nil, ErrReported
		}
		return nil, fmt.Errorf("dataset %q: %w", ds.Name, err)
	}
	c2 := d.Manifest.Counts
	fmt.Fprintf(st.Stdout, "dataset %s: %d scenarios (%d pairs), %d clips (%d synthesised, %d reused) -> %s\n",
		ds.Name, c2.Scenarios, c2.Pairs, rep.Clips, rep.Synthesised, rep.Reused, ds.Out)
	return d, nil
}

// startConfigured starts a plugin, checks its config block against the schema it
// describes, and configures it. With a lock file next to the run file, a plugin that no
// longer matches it is refused before it starts (architecture.md "Pinning").
func startConfigured(st *State, ctx context.Context, f *config.File, block *config.PluginBlock, logger hclog.Logger) (*pluginhost.Client, error) {
	if err := checkAgainstLock(f, block); err != nil {
		return nil, err
	}
	c, err := pluginhost.Start(ctx, block.Spec, logger)
	if err != nil {
		return nil, err // pluginhost names the plugin and says what to do
	}
	info, err := c.Describe(ctx)
	if err != nil {
		c.Kill()
		return nil, err
	}
	lock, _ := readLockFor(f) // checkAgainstLock has read it already
	if err := checkLockedVersion(lock, block, info.Version); err != nil {
		c.Kill()
		return nil, err
	}
	cfg, diags := config.CheckPluginConfig(block, info.Config)
	if diags.HasErrors() {
		c.Kill()
		writeDiagnostics(st, f.Sources, diags, f.Path, f.Path)
		return nil, ErrReported
	}
	if err := c.Configure(ctx, cfg); err != nil {
		c.Kill()
		return nil, fmt.Errorf("plugin %q: configure: %w", block.Name, err)
	}
	return c, nil
}

// datasetScripts reads, generates or asks an LLM for the dataset's scenario scripts.
func datasetScripts(st *State, ctx context.Context, f *config.File, ds *config.Dataset, logger hclog.Logger) ([]dataset.Scenario, dataset.Generator, error) {
	if ds.Generate == nil {
		d, vs, err := dataset.ValidatePath(ds.Scenarios)
		if err != nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		// Clips of a source that is itself a built dataset are not this build's concern.
		var script []dataset.Violation
		for _, v := range vs {
			switch v.Rule {
			case dataset.RuleClipMissing, dataset.RuleClipUnreadable, dataset.RuleClipDuration,
				dataset.RulePreamble, dataset.RuleManifestHash, dataset.RuleManifestCounts:
			default:
				script = append(script, v)
			}
		}
		if len(script) > 0 {
			for _, v := range script {
				fmt.Fprintln(st.Stderr, v.String())
			}
			fmt.Fprintf(st.Stderr, "dataset %q: %d violations in %s; fix them, then build again\n", ds.Name, len(script), d.File)
			return nil, dataset.Generator{}, ErrReported
		}
		rel := ds.Scenarios
		if r, err := filepath.Rel(f.Dir, ds.Scenarios); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
		return d.Scenarios, dataset.Generator{Kind: "file", Source: filepath.ToSlash(rel)}, nil
	}
	g := ds.Generate
	seed := g.Seed
	switch g.Generator {
	case "llm":
		block := f.Plugin(g.LLM)
		if block == nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: llm plugin %q is not declared", ds.Name, g.LLM)
		}
		c, err := startConfigured(st, ctx, f, block, logger)
		if err != nil {
			return nil, dataset.Generator{}, err
		}
		defer c.Kill()
		llm, err := c.LLM()
		if err != nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: plugin %q: %w", ds.Name, g.LLM, err)
		}
		info, _ := c.Describe(ctx)
		scs, id, err := construct.GenerateLLM(ctx, llm, construct.LLMSpec{Pairs: g.Pairs, Seed: seed, FourSpeakerShare: g.FourSpeakerShare})
		if err != nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		id["llm_plugin"] = g.LLM
		for k, v := range info.Identity {
			id["llm_"+k] = v
		}
		return scs, dataset.Generator{Kind: "llm", Seed: &seed, Identity: id}, nil
	default:
		scs, err := construct.Generate(construct.GenerateSpec{Pairs: g.Pairs, Seed: seed, FourSpeakerShare: g.FourSpeakerShare})
		if err != nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		return scs, dataset.Generator{Kind: "procedural", Seed: &seed, Identity: map[string]string{"version": construct.GeneratorVersion}}, nil
	}
}

// progressBar shows synthesis progress: a bar on a terminal, a few plain lines
// otherwise (logs, CI, tests).
type progressBar struct {
	ctx   context.Context
	w     io.Writer
	verb  string // "synthesising"
	name  string
	unit  string // "clips"
	mu    sync.Mutex
	p     *mpb.Progress
	bar   *mpb.Bar
	total int
	done  int
	made  int
	step  int
}

func newProgressBar(ctx context.Context, w io.Writer, name string) *progressBar {
	return newCountBar(ctx, w, "synthesising", name, "clips")
}

// newCountBar counts units of work: a bar on a terminal, a few plain lines otherwise.
func newCountBar(ctx context.Context, w io.Writer, verb, name, unit string) *progressBar {
	return &progressBar{ctx: ctx, w: w, verb: verb, name: name, unit: unit}
}

func (b *progressBar) Start(total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total = total
	if tty, _ := terminal(b.w); tty {
		b.p = mpb.NewWithContext(b.ctx, mpb.WithOutput(b.w), mpb.WithWidth(40))
		b.bar = b.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(b.verb+" "+b.name+" "), decor.CountersNoUnit("%d/%d "+b.unit)),
			mpb.AppendDecorators(decor.Percentage(), decor.Name(" "), decor.EwmaETA(decor.ET_STYLE_GO, 30)))
		return
	}
	fmt.Fprintf(b.w, "%s %s: %d %s\n", b.verb, b.name, total, b.unit)
}

func (b *progressBar) Clip(synthesised bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done++
	if synthesised {
		b.made++
	}
	if b.bar != nil {
		b.bar.Increment()
		return
	}
	if q := 4 * b.done / max(b.total, 1); q > b.step && b.done < b.total {
		b.step = q
		fmt.Fprintf(b.w, "%s %s: %d/%d %s (%d new)\n", b.verb, b.name, b.done, b.total, b.unit, b.made)
	}
}

func (b *progressBar) finish(ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p == nil {
		return
	}
	if !ok {
		b.bar.Abort(false)
	}
	b.p.Wait()
}
