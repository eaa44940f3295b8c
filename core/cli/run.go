package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
)

func init() { register(newRunCmd) }

// runInfo is RUN_DIR/run.json: where the run came from, so that `score RUN_DIR` and
// `report RUN_DIR` can find the run file again. It is not part of the manifest, which
// must be equal on every shard wherever it ran.
type runInfo struct {
	RunFile    string   `json:"run_file"`
	Evaluation string   `json:"evaluation"`
	Vars       []string `json:"vars,omitempty"`
}

const runInfoFile = "run.json"

func newRunCmd(st *State) *cobra.Command {
	var (
		vars      []string
		only      string
		shardFlag string
		noScore   bool
		deadline  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run FILE.hcl",
		Short: "Build the datasets, evaluate every model, score, and write the report",
		Long: "Run every evaluation block of a run file (or only --evaluation NAME): build its\n" +
			"dataset (clips already built are reused), play every conversation through every\n" +
			"model plugin into the run store (<out>/), score the recorded outputs with the asr and\n" +
			"judge plugins, and write report.md, report.html, results.json and results.csv there.\n" +
			"The main table is printed at the end.\n\n" +
			"Re-running resumes: finished conversations are reused, failed ones retried. With\n" +
			"--shard i/N only a deterministic slice is played (and nothing is scored); combine\n" +
			"shard directories with `duplexmpe merge`, then `duplexmpe score`.",
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			shard := store.All
			if shardFlag != "" {
				s, err := store.ParseShard(shardFlag)
				if err != nil {
					return UsageErrorf("--shard: %v", err)
				}
				shard = s
			}
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			if len(f.Evaluations) == 0 {
				return fmt.Errorf("%s has no evaluation block; add evaluation \"name\" { dataset = dataset.x, models = [plugin.y], asr = plugin.z, judge = plugin.w }", args[0])
			}
			found := false
			for _, ev := range f.Evaluations {
				if only != "" && ev.Name != only {
					continue
				}
				found = true
				if err := runEvaluation(st, f, ev, vars, shard, deadline, !noScore && shard.Count <= 1); err != nil {
					return err
				}
			}
			if !found {
				return UsageErrorf("--evaluation %q: %s has no such evaluation block", only, args[0])
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().StringVar(&only, "evaluation", "", "run only this evaluation block")
	cmd.Flags().StringVar(&shardFlag, "shard", "", "play only slice i of N (e.g. 2/8); scoring waits for `merge`")
	cmd.Flags().BoolVar(&noScore, "no-score", false, "play the conversations but do not score or report")
	cmd.Flags().DurationVar(&deadline, "frame-deadline", 2*time.Minute, "fail a conversation whose model takes longer than this for one frame")
	return cmd
}

// runEvaluation plays, scores and reports one evaluation block.
func runEvaluation(st *State, f *config.File, ev *config.Evaluation, vars []string, shard store.Shard, deadline time.Duration, doScore bool) error {
	ctx := st.Ctx
	logger := pluginLogger(st)

	dsBlock := f.Dataset(ev.Dataset)
	if dsBlock == nil {
		return fmt.Errorf("evaluation %q: dataset %q is not declared", ev.Name, ev.Dataset)
	}
	ds, err := BuildDataset(st, f, dsBlock)
	if err != nil {
		return err
	}

	det, err := vad.Open(vad.Options{Model: ev.VAD.Model})
	if err != nil {
		return fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	defer det.Close()

	models, err := startModels(st, f, ev, logger, ev.Out)
	defer func() {
		for _, m := range models {
			m.Client.Kill()
		}
	}()
	if err != nil {
		return err
	}

	opts := evaluate.Options{
		Params: ev.Protocol, VAD: ev.VAD, Detector: det, Seed: ev.Seed,
		FrameDeadline: deadline, StartDeadline: 10 * time.Minute,
		Shard: shard, Concurrency: ev.Concurrency, Progress: st.Stderr,
		Logger: logger,
	}
	man, err := evaluate.NewManifest(ev.Name, ds, models, opts)
	if err != nil {
		return fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	bi := ReadBuildInfo()
	man.Harness = store.Harness{Version: bi.Version, Commit: bi.Commit, Modified: bi.Modified, GoVersion: bi.GoVersion, ProtocolVersion: bi.ProtocolVersion}
	s, err := openOrCreateStore(ev.Out, man)
	if err != nil {
		return fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	if err := writeJSONFile(filepath.Join(s.Dir(), runInfoFile), runInfo{RunFile: f.Path, Evaluation: ev.Name, Vars: vars}); err != nil {
		return err
	}

	started := time.Now()
	sum, runErr := evaluate.Run(ctx, ds, models, s, opts)
	for _, m := range models {
		c := sum.Models[m.Name]
		if c == nil {
			continue
		}
		fmt.Fprintf(st.Stdout, "model %s: %d conversations: %d reused, %d played, %d failed, %d plugin restarts\n",
			m.Name, c.Planned, c.Reused, c.Done, c.Failed, c.Restarts)
	}
	if sum.Total.Planned > 0 && sum.Total.Reused == sum.Total.Planned {
		fmt.Fprintf(st.Stdout, "every conversation was already in %s: no model session started\n", ev.Out)
	}
	fmt.Fprintf(st.Stdout, "evaluation %s: played in %s -> %s\n", ev.Name, time.Since(started).Round(time.Second), ev.Out)
	for _, m := range models {
		m.Client.Kill()
	}
	if runErr != nil {
		if st.Ctx.Err() != nil {
			return fmt.Errorf("evaluation %q interrupted; finished conversations are kept in %s: run the same command again to resume", ev.Name, ev.Out)
		}
		return fmt.Errorf("evaluation %q stopped: %w (finished conversations are kept in %s; run again to resume)", ev.Name, runErr, ev.Out)
	}
	if !doScore {
		return nil
	}
	return scoreRun(st, f, ev, s, det, ev.Judge)
}

// startModels starts and configures every model plugin of ev; on error it returns those
// already started, for the caller to kill.
func startModels(st *State, f *config.File, ev *config.Evaluation, logger hclog.Logger, runDir string) ([]*evaluate.Model, error) {
	var models []*evaluate.Model
	for _, name := range ev.Models {
		block := f.Plugin(name)
		if block == nil {
			return models, fmt.Errorf("evaluation %q: model plugin %q is not declared", ev.Name, name)
		}
		block = withLogFile(block, runDir)
		c, err := startConfigured(st, st.Ctx, f, block, logger)
		if err != nil {
			return models, err
		}
		info, err := c.Describe(st.Ctx)
		if err != nil {
			c.Kill()
			return models, err
		}
		m, err := c.Model()
		if err != nil {
			c.Kill()
			return models, fmt.Errorf("evaluation %q: %w", ev.Name, err)
		}
		hash, err := pluginHash(block.Spec)
		if err != nil {
			c.Kill()
			return models, fmt.Errorf("plugin %q: %w", name, err)
		}
		cfg, _ := config.CheckPluginConfig(block, info.Config) // checked by startConfigured
		models = append(models, &evaluate.Model{Name: name, Model: m, Client: c, Info: info, Hash: hash, Config: cfg})
	}
	return models, nil
}

// withLogFile sends a plugin's whole log (every level, and its stdout and stderr) to
// RUN_DIR/logs/<plugin>.log; the terminal gets warnings and errors only.
func withLogFile(block *config.PluginBlock, runDir string) *config.PluginBlock {
	b := *block
	b.Spec.LogFile = filepath.Join(runDir, "logs", block.Name+".log")
	return &b
}

// openOrCreateStore resumes the run in dir when its manifest matches, and refuses to mix
// two different runs in one directory.
func openOrCreateStore(dir string, man store.Manifest) (*store.Store, error) {
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); errors.Is(err, fs.ErrNotExist) {
		return store.Create(dir, man)
	}
	s, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	old := s.Manifest()
	old.Harness, man.Harness = store.Harness{}, store.Harness{} // a rebuilt harness may resume
	if diff := store.Diff(old, man); len(diff) > 0 {
		return nil, fmt.Errorf("%s holds a run with a different %s; set another out directory in the evaluation block, or remove %s to start over",
			dir, strings.Join(diff, ", "), dir)
	}
	return s, nil
}

// writeJSONFile writes v as indented JSON, atomically.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'))
}
