// Package slurm tests the Slurm scripts of this directory on a real one-node Slurm
// cluster (cluster.sh: Debian's munged, slurmctld and slurmd). It needs root and starts
// daemons, so it runs only when DMPE_TEST_SLURM=1 (`make test-slurm`).
package slurm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/store"
)

const shards = 4

// TestSlurmArray plays examples/deploy/baselines.hcl as a 4-task job array (2 at a time,
// each shard starting a stand-in model server and waiting for it), stops two tasks in
// the middle of their run (a plain scancel, and the clean stop through the batch shell),
// and checks that
//   - the merge job, which runs after every shard whatever the outcome, merges what
//     finished, names the unfinished shards, exits 1 and does not score;
//   - the resubmitted shards resume: they reuse every conversation finished before the
//     stop (their files untouched) and play only the others;
//   - the second merge job completes and scores, and the merged run is the one a single
//     machine makes from the same file: the same item ids, the same records, the same
//     verdicts and summary.
func TestSlurmArray(t *testing.T) {
	if os.Getenv("DMPE_TEST_SLURM") != "1" {
		t.Skip("starts a one-node Slurm cluster as root: run it with make test-slurm (DMPE_TEST_SLURM=1)")
	}
	started := time.Now()
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(repo, "bin", "duplexmpe")
	runFile := filepath.Join(repo, "examples", "deploy", "baselines.hcl")
	for _, f := range []string{bin, filepath.Join(repo, "bin", "plugins", "random-talk"), filepath.Join(repo, "build", "datasets", "shipped")} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v: build first (make build dataset-check)", err)
		}
	}
	clusterDir := os.Getenv("DMPE_SLURM_DIR")
	if clusterDir == "" {
		clusterDir = "/tmp/duplexmpe-slurm-test"
	}
	serverPort := 18700
	if p := os.Getenv("DMPE_TEST_SERVER_PORT"); p != "" {
		serverPort, _ = strconv.Atoi(p)
	}
	for i := range shards {
		if listening(serverPort + i) {
			t.Fatalf("port %d is taken; the stand-in model servers need %d-%d free (set DMPE_TEST_SERVER_PORT)", serverPort+i, serverPort, serverPort+shards-1)
		}
	}
	work := t.TempDir()
	root := filepath.Join(work, "run")

	// One scoring worker: PocketSphinx's transcript of a clip depends on the clips its
	// decoder heard before (its cepstral mean carries over), so the single-machine and
	// the merged scoring must see the clips in the same order to give the same verdicts.
	env := append(os.Environ(),
		"SLURM_CONF="+filepath.Join(clusterDir, "etc", "slurm.conf"),
		"DUPLEXMPE="+bin,
		"GOMAXPROCS=1",
		fmt.Sprintf("DMPE_SERVER_CMD=exec python3 -m http.server $((%d + DMPE_SHARD_INDEX)) --bind 127.0.0.1", serverPort),
		fmt.Sprintf("DMPE_SERVER_READY=curl -fsS -o /dev/null http://127.0.0.1:$((%d + DMPE_SHARD_INDEX))/", serverPort),
		"DMPE_SERVER_READY_TIMEOUT=120",
	)
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = env, repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	cluster := filepath.Join(repo, "examples", "deploy", "slurm", "cluster.sh")
	run(cluster, "down", clusterDir) // whatever an interrupted earlier test left
	run(cluster, "up", clusterDir)
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, filepath.Join(root, "slurm"), filepath.Join(clusterDir, "log"))
		}
		cmd := exec.Command(cluster, "down", clusterDir)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("cluster.sh down: %v\n%s", err, out)
		}
	})
	t.Logf("cluster up after %s", time.Since(started).Round(time.Second))

	submitted := time.Now()
	jobs := submitIDs(t, run("examples/deploy/slurm/submit.sh", "--shards", strconv.Itoa(shards), "--parallel", "2", runFile, root))
	if st := waitJob(t, env, jobs["build"]); st[0].state != "COMPLETED" {
		t.Fatalf("the build job ended %+v", st)
	}

	// The single-machine run of the same file, beside the cluster's work (once the
	// dataset is built, so the two never build it at once).
	single := filepath.Join(work, "single")
	ref := exec.Command(bin, "run", runFile, "--var", "out="+single)
	ref.Env, ref.Dir = env, repo
	refLog, err := os.Create(filepath.Join(work, "single.log"))
	if err != nil {
		t.Fatal(err)
	}
	ref.Stdout, ref.Stderr = refLog, refLog
	if err := ref.Start(); err != nil {
		t.Fatal(err)
	}
	refDone := make(chan error, 1)
	go func() { refDone <- ref.Wait() }()
	t.Cleanup(func() {
		if ref.ProcessState == nil {
			ref.Process.Kill()
			<-refDone
		}
	})

	// Stop two shards in the middle of their run, once each has finished a conversation:
	// shard 1 with a plain scancel (every process of the job gets SIGTERM at once), shard
	// 2 the clean way docs/scale.md gives (only the batch shell is signalled, and passes
	// it on to duplexmpe, which ends its plugins itself).
	type stopped struct {
		index   int
		how     []string // the scancel arguments before the task id
		state   string   // the task's state afterwards
		planned []string
		before  map[string]marker // its finished conversations when it stopped
	}
	victims := []*stopped{
		{index: 1, state: "CANCELLED"},
		{index: 2, how: []string{"--batch", "--signal=TERM"}, state: "FAILED"},
	}
	shardDir := func(i int) string { return filepath.Join(root, fmt.Sprintf("shard-%d-of-4", i)) }
	for _, v := range victims {
		task := fmt.Sprintf("%s_%d", jobs["shards"], v.index)
		deadline := time.Now().Add(15 * time.Minute)
		var lastCheck time.Time // the task's state is read once a second: it may have ended early
		for len(doneMarkers(t, shardDir(v.index))) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("shard %d finished no conversation in 15 minutes: %+v", v.index, jobStates(t, env, task))
			}
			if time.Since(lastCheck) < time.Second {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			lastCheck = time.Now()
			if st := jobStates(t, env, task); finalStates[st[0].state] && len(doneMarkers(t, shardDir(v.index))) == 0 {
				out, _ := os.ReadFile(filepath.Join(root, "slurm", fmt.Sprintf("duplexmpe-shard-%s.out", task)))
				t.Fatalf("shard %d ended (%+v) before it finished a conversation:\n%s", v.index, st, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
		run("scancel", append(v.how, task)...)
		if st := waitJob(t, env, task); st[0].state != v.state {
			t.Fatalf("shard %d after scancel %s: %+v, want %s", v.index, strings.Join(v.how, " "), st, v.state)
		}
		v.planned = shardRecord(t, shardDir(v.index)).Items
		v.before = doneMarkers(t, shardDir(v.index))
		if len(v.before) >= len(v.planned) {
			t.Fatalf("shard %d finished all %d conversations before it could be stopped: nothing to resume (the machine was too fast for this test's poll)", v.index, len(v.planned))
		}
		t.Logf("stopped shard %d (scancel %s) after %d of its %d conversations", v.index, strings.Join(v.how, " "), len(v.before), len(v.planned))
	}
	// Stopped cleanly, shard 2 recorded no conversation as failed.
	if n := len(finished(t, shardDir(2))) - len(victims[1].before); n != 0 {
		t.Errorf("shard 2, stopped through its batch shell, recorded %d conversations as failed", n)
	}
	if log := readFile(t, filepath.Join(root, "slurm", fmt.Sprintf("duplexmpe-shard-%s_2.out", jobs["shards"]))); !strings.Contains(log, "interrupted; finished conversations are kept") {
		t.Errorf("shard 2's duplexmpe did not stop as interrupted:\n%s", log)
	}

	// The merge job runs after the whole array (afterany), merges what is there, names
	// the unfinished shards, and exits 1 without scoring.
	merge1 := waitJob(t, env, jobs["merge"])
	if merge1[0].state != "FAILED" || merge1[0].exit != "1:0" {
		t.Errorf("first merge job %+v, want FAILED with exit code 1 (the run is incomplete)", merge1)
	}
	for _, st := range waitJob(t, env, jobs["shards"]) {
		if (st.task == "0" || st.task == "3") && st.state != "COMPLETED" {
			t.Errorf("shard task %s: %+v", st.task, st)
		}
	}
	log1 := readFile(t, filepath.Join(root, "slurm", "duplexmpe-merge-"+jobs["merge"]+".out"))
	for _, v := range victims {
		want := fmt.Sprintf("shard %d/4 has %d of its %d planned items unfinished", v.index, len(v.planned)-len(finished(t, shardDir(v.index))), len(v.planned))
		if !strings.Contains(log1, want) {
			t.Errorf("first merge job's output does not say %q:\n%s", want, log1)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "merged", "summary.json")); err == nil {
		t.Error("the incomplete merge was scored")
	}
	for i := range shards {
		if listening(serverPort + i) {
			t.Errorf("shard %d's model server still listens on port %d after the shard ended", i, serverPort+i)
		}
		if _, err := os.Stat(filepath.Join(shardDir(i), "logs", "server.log")); err != nil {
			t.Errorf("shard %d: %v (the model server was not started)", i, err)
		}
	}

	// Every conversation finished so far, in any shard, must survive untouched.
	kept := map[string]marker{}
	for i := range shards {
		for id, m := range doneMarkers(t, shardDir(i)) {
			kept[id] = m
		}
	}
	resubmitted := submitIDs(t, run("examples/deploy/slurm/submit.sh", "--shards", strconv.Itoa(shards), "--only", "1,2", runFile, root))
	if _, ok := resubmitted["build"]; ok {
		t.Error("a resubmission built the datasets again")
	}
	for _, st := range waitJob(t, env, resubmitted["shards"]) {
		if st.state != "COMPLETED" {
			t.Fatalf("resubmitted shard %s: %+v", st.task, st)
		}
	}
	merge2 := waitJob(t, env, resubmitted["merge"])
	if merge2[0].state != "COMPLETED" {
		t.Fatalf("second merge job %+v, want COMPLETED", merge2)
	}
	clusterTime := time.Since(submitted)

	// Nothing finished was played again, and the holes were filled.
	for i := range shards {
		after := doneMarkers(t, shardDir(i))
		for id, m := range kept {
			if a, ok := after[id]; ok && a != m {
				t.Errorf("shard %d: item %s, finished before the resubmission, was written again", i, id)
			}
		}
		if got, want := len(finished(t, shardDir(i))), len(shardRecord(t, shardDir(i)).Items); got != want {
			t.Errorf("shard %d: %d of its %d planned items finished", i, got, want)
		}
	}
	for _, v := range victims {
		var reused, played int
		for _, c := range counts(t, filepath.Join(root, "slurm", fmt.Sprintf("duplexmpe-shard-%s_%d.out", resubmitted["shards"], v.index))) {
			reused += c[0]
			played += c[1] + c[2]
		}
		if reused != len(v.before) || played != len(v.planned)-len(v.before) {
			t.Errorf("resubmitted shard %d: %d reused, %d played; want the %d finished before the stop reused and only the other %d played",
				v.index, reused, played, len(v.before), len(v.planned)-len(v.before))
		}
	}
	for _, i := range []int{0, 3} {
		for model, c := range counts(t, filepath.Join(root, "slurm", fmt.Sprintf("duplexmpe-shard-%s_%d.out", jobs["shards"], i))) {
			if c[0] != 0 {
				t.Errorf("shard %d reused %d conversations of %s on its first and only run", i, c[0], model)
			}
		}
	}

	// The merged run is the single machine's run.
	select {
	case err := <-refDone:
		if err != nil {
			t.Fatalf("single-machine run: %v\n%s", err, readFile(t, refLog.Name()))
		}
	case <-time.After(30 * time.Minute):
		t.Fatal("the single-machine run did not end in 30 minutes")
	}
	merged := filepath.Join(root, "merged")
	a, b := itemIDs(t, single), itemIDs(t, merged)
	if !reflect.DeepEqual(a, b) || len(a) != 48 {
		t.Fatalf("item ids: single machine %d, merged %d; want the same 48", len(a), len(b))
	}
	for _, id := range a {
		for _, dir := range []string{single, merged} {
			if _, err := os.Stat(filepath.Join(dir, "items", id, "done")); err != nil {
				t.Errorf("%v: every conversation of these baselines finishes", err)
			}
		}
		if file, err := store.SameRecord(filepath.Join(single, "items", id), filepath.Join(merged, "items", id)); err != nil || file != "" {
			t.Errorf("item %s: the records differ in %q (%v)", id, file, err)
		}
		if x, y := readFile(t, filepath.Join(single, "items", id, "verdicts.json")), readFile(t, filepath.Join(merged, "items", id, "verdicts.json")); x != y {
			t.Errorf("item %s: the verdicts differ", id)
		}
	}
	if x, y := jsonFile(t, filepath.Join(single, "summary.json")), jsonFile(t, filepath.Join(merged, "summary.json")); !reflect.DeepEqual(x, y) {
		t.Error("the summaries of the single-machine and the merged run differ")
	}

	// Figures for docs/scale.md.
	for _, st := range append(jobStates(t, env, jobs["shards"]), jobStates(t, env, resubmitted["shards"])...) {
		t.Logf("shard task %s: %s, %s", st.task, st.state, st.took)
	}
	played := regexp.MustCompile(`(?m)^evaluation \S+: played in (\S+)`)
	outs, _ := filepath.Glob(filepath.Join(root, "slurm", "duplexmpe-shard-*.out"))
	for _, out := range outs {
		n := 0
		for _, c := range parseCounts(readFile(t, out)) {
			n += c[1] + c[2]
		}
		if m := played.FindStringSubmatch(readFile(t, out)); m != nil {
			t.Logf("%s: %d conversations played in %s", filepath.Base(out), n, m[1])
		}
	}
	for name, id := range map[string]string{"build": jobs["build"], "first merge": jobs["merge"], "merge+score": resubmitted["merge"]} {
		st := jobStates(t, env, id)
		t.Logf("%s job: %s, %s", name, st[0].state, st[0].took)
	}
	t.Logf("cluster work from the first sbatch to the scored merge: %s; whole test %s", clusterTime.Round(time.Second), time.Since(started).Round(time.Second))
}

// submitIDs reads submit.sh's "build job ID", "shards job ID", "merge job ID" lines.
func submitIDs(t *testing.T, out string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(build|shards|merge) job ([0-9]+)$`).FindAllStringSubmatch(out, -1) {
		ids[m[1]] = m[2]
	}
	if ids["shards"] == "" || ids["merge"] == "" {
		t.Fatalf("submit.sh printed no job ids:\n%s", out)
	}
	return ids
}

type jobState struct {
	task   string // the array task id, "" for a plain job
	state  string
	reason string
	exit   string
	took   time.Duration
}

var finalStates = map[string]bool{"COMPLETED": true, "FAILED": true, "CANCELLED": true, "TIMEOUT": true,
	"NODE_FAIL": true, "OUT_OF_MEMORY": true, "PREEMPTED": true, "BOOT_FAIL": true, "DEADLINE": true}

// jobStates reads `scontrol show job -o ID`: one line per job, or per task of an array.
func jobStates(t *testing.T, env []string, id string) []jobState {
	t.Helper()
	cmd := exec.Command("scontrol", "show", "job", "-o", id)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", id, err)
	}
	var sts []jobState
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		st := jobState{task: f["ArrayTaskId"], state: f["JobState"], reason: f["Reason"], exit: f["ExitCode"]}
		start, err1 := time.Parse("2006-01-02T15:04:05", f["StartTime"])
		end, err2 := time.Parse("2006-01-02T15:04:05", f["EndTime"])
		if err1 == nil && err2 == nil && finalStates[st.state] {
			st.took = end.Sub(start)
		}
		sts = append(sts, st)
	}
	sort.Slice(sts, func(i, j int) bool { return sts[i].task < sts[j].task })
	return sts
}

// waitJob waits until the job (every task of an array) has ended.
func waitJob(t *testing.T, env []string, id string) []jobState {
	t.Helper()
	deadline := time.Now().Add(30 * time.Minute)
	for {
		sts := jobStates(t, env, id)
		done := true
		for _, st := range sts {
			done = done && finalStates[st.state]
			if st.reason == "DependencyNeverSatisfied" {
				t.Fatalf("job %s will never run: its dependency failed (%+v)", id, sts)
			}
		}
		if done {
			return sts
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s has not ended in 30 minutes: %+v", id, sts)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// marker identifies one write of an item's done marker: a replayed item is saved anew.
type marker struct {
	inode uint64
	mtime time.Time
}

func doneMarkers(t *testing.T, dir string) map[string]marker {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "items", "*", "done"))
	m := map[string]marker{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue // being replaced right now
		}
		m[filepath.Base(filepath.Dir(p))] = marker{inode: fi.Sys().(*syscall.Stat_t).Ino, mtime: fi.ModTime()}
	}
	return m
}

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// finished lists the items of dir with a marker, done or failed.
func finished(t *testing.T, dir string) []string {
	t.Helper()
	s := openStore(t, dir)
	var out []string
	for _, id := range itemIDs(t, dir) {
		if s.Status(id) != store.Missing {
			out = append(out, id)
		}
	}
	return out
}

func shardRecord(t *testing.T, dir string) store.ShardRecord {
	t.Helper()
	recs, err := openStore(t, dir).Shards()
	if err != nil || len(recs) != 1 {
		t.Fatalf("%s: shard records %+v, %v; want one", dir, recs, err)
	}
	return recs[0]
}

func itemIDs(t *testing.T, dir string) []string {
	t.Helper()
	ids, err := openStore(t, dir).IDs()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

var countLine = regexp.MustCompile(`^model (\S+): [0-9]+ conversations: ([0-9]+) reused, ([0-9]+) played, ([0-9]+) failed`)

// counts reads run's "model M: N conversations: R reused, P played, F failed" lines:
// model -> [R, P, F].
func counts(t *testing.T, path string) map[string][3]int {
	t.Helper()
	c := parseCounts(readFile(t, path))
	if len(c) != 2 {
		t.Errorf("%s: counts for %d models, want 2:\n%s", path, len(c), readFile(t, path))
	}
	return c
}

func parseCounts(text string) map[string][3]int {
	c := map[string][3]int{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if m := countLine.FindStringSubmatch(sc.Text()); m != nil {
			r, _ := strconv.Atoi(m[2])
			p, _ := strconv.Atoi(m[3])
			f, _ := strconv.Atoi(m[4])
			c[m[1]] = [3]int{r, p, f}
		}
	}
	return c
}

func listening(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonFile(t *testing.T, path string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(readFile(t, path)), &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func dumpLogs(t *testing.T, dirs ...string) {
	for _, dir := range dirs {
		paths, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
			if len(lines) > 15 {
				lines = lines[len(lines)-15:]
			}
			t.Logf("--- %s (last lines)\n%s", p, strings.Join(lines, "\n"))
		}
	}
}
