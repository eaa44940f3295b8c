// Package kubernetes checks the manifests of this directory without a cluster: every
// document decodes strictly into the Kubernetes API types (k8s.io/api; an unknown or
// misspelt field is an error, as `kubectl apply --validate=strict` would make it), the
// rules of the API server that these manifests come near are checked by hand, and so is
// everything the harness depends on: the index that becomes --shard, the failure
// policy's exit code, the sidecar and its probes, the shared volume, and the run file
// the command lines drive, loaded with the values they pass.
package kubernetes

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// imageRoot is where the image holds the repository.
const imageRoot = "/opt/duplexmpe"

// deterministicExit is the harness's exit code for a failure that a retry cannot
// mend (docs/scale.md): the contract the failure policy relies on.
const deterministicExit = 3

type manifests struct {
	jobs map[string]*batchv1.Job
	pvcs map[string]*corev1.PersistentVolumeClaim
}

// decodeStrict decodes one YAML document into the API type its apiVersion and kind name.
func decodeStrict(doc []byte) (any, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	var obj any
	switch head.APIVersion + " " + head.Kind {
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "v1 PersistentVolumeClaim":
		obj = &corev1.PersistentVolumeClaim{}
	default:
		return nil, fmt.Errorf("apiVersion %q kind %q: not a kind these manifests use", head.APIVersion, head.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

func load(t *testing.T) manifests {
	t.Helper()
	m := manifests{jobs: map[string]*batchv1.Job{}, pvcs: map[string]*corev1.PersistentVolumeClaim{}}
	files, _ := filepath.Glob("*.yaml")
	if len(files) == 0 {
		t.Fatal("no manifests here")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range docSep.Split(string(raw), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			obj, err := decodeStrict([]byte(doc))
			if err != nil {
				t.Errorf("%s, document %d: %v", f, i+1, err)
				continue
			}
			switch o := obj.(type) {
			case *batchv1.Job:
				m.jobs[o.Name] = o
			case *corev1.PersistentVolumeClaim:
				m.pvcs[o.Name] = o
			}
		}
	}
	return m
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func (m manifests) job(t *testing.T, name string) *batchv1.Job {
	t.Helper()
	j := m.jobs[name]
	if j == nil {
		t.Fatalf("no Job %q among the manifests", name)
	}
	return j
}

func TestDecodingIsStrict(t *testing.T) {
	raw, err := os.ReadFile("shards-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeStrict(raw); err != nil {
		t.Fatalf("shards-job.yaml: %v", err)
	}
	for bad, want := range map[string]string{
		"completionMode: Indexed":   "completionsMode: Indexed", // misspelt
		"backoffLimitPerIndex: 2":   "backoffLimitPerIndex: two",
		"restartPolicy: Always":     "restartPolicy: Always\n          sidecar: true",
		"terminationGracePeriodSec": "terminationGracePeriod",
	} {
		doc := strings.Replace(string(raw), bad, want, 1)
		if doc == string(raw) {
			t.Fatalf("shards-job.yaml has no %q to break", bad)
		}
		if _, err := decodeStrict([]byte(doc)); err == nil {
			t.Errorf("a manifest with %q instead of %q decoded without error", want, bad)
		}
	}
}

func TestShardsJob(t *testing.T) {
	m := load(t)
	j := m.job(t, "duplexmpe-shards")
	s := j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("completionMode is not Indexed: the pods get no JOB_COMPLETION_INDEX")
	}
	if s.Completions == nil || *s.Completions < 1 || *s.Completions > 100000 {
		t.Fatalf("completions %v: want the shard count, 1 to 10^5", s.Completions)
	}
	n := int(*s.Completions)
	if s.Parallelism == nil || *s.Parallelism < 1 || int(*s.Parallelism) > n {
		t.Errorf("parallelism %v: want 1 to completions (%d)", s.Parallelism, n)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 1 {
		t.Error("backoffLimitPerIndex is not set: one index's failures would use up the whole Job's retries")
	}
	if s.MaxFailedIndexes == nil || int(*s.MaxFailedIndexes) > n {
		t.Errorf("maxFailedIndexes %v: want it set, at most completions (%d)", s.MaxFailedIndexes, n)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: a podFailurePolicy needs Never", pod.RestartPolicy)
	}

	// The failure policy: exit code 3 of the harness fails the index at once; a
	// disruption is retried without counting.
	main := container(t, pod.Containers, "duplexmpe")
	if s.PodFailurePolicy == nil {
		t.Fatal("no podFailurePolicy")
	}
	var failIndex, ignoreDisruption bool
	for _, r := range s.PodFailurePolicy.Rules {
		switch {
		case r.Action == batchv1.PodFailurePolicyActionFailIndex && r.OnExitCodes != nil:
			c := r.OnExitCodes
			if c.ContainerName == nil || *c.ContainerName != main.Name {
				t.Errorf("the FailIndex rule names container %v, want %q (else another container's code 3 counts)", c.ContainerName, main.Name)
			}
			if c.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn || len(c.Values) != 1 || c.Values[0] != deterministicExit {
				t.Errorf("the FailIndex rule matches %s %v, want In [%d]", c.Operator, c.Values, deterministicExit)
			}
			failIndex = true
		case r.Action == batchv1.PodFailurePolicyActionIgnore:
			for _, p := range r.OnPodConditions {
				if p.Type == corev1.DisruptionTarget && (p.Status == "" || p.Status == corev1.ConditionTrue) {
					ignoreDisruption = true
				}
			}
		}
	}
	if !failIndex {
		t.Errorf("no FailIndex rule on exit code %d: a deterministic failure is retried %v times for nothing", deterministicExit, s.BackoffLimitPerIndex)
	}
	if !ignoreDisruption {
		t.Error("no Ignore rule for DisruptionTarget: a preempted pod uses up its index's retries")
	}

	// The model server is a native sidecar with probes, on the port the run file dials.
	if len(pod.InitContainers) != 1 {
		t.Fatalf("%d init containers, want the model server alone", len(pod.InitContainers))
	}
	side := pod.InitContainers[0]
	if side.RestartPolicy == nil || *side.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("init container %q has restartPolicy %v: without Always it is not a sidecar, and the shard would wait for it to exit", side.Name, side.RestartPolicy)
	}
	if side.StartupProbe == nil || side.ReadinessProbe == nil {
		t.Fatalf("sidecar %q: startupProbe %v, readinessProbe %v; want both (the startup probe holds duplexmpe back until the model is loaded)", side.Name, side.StartupProbe, side.ReadinessProbe)
	}
	port := probePort(t, side.StartupProbe)
	if p := probePort(t, side.ReadinessProbe); p != port {
		t.Errorf("the sidecar's probes check ports %d and %d", port, p)
	}
	if len(side.Ports) != 1 || int(side.Ports[0].ContainerPort) != port {
		t.Errorf("the sidecar declares ports %+v, its probes check %d", side.Ports, port)
	}

	// The shard's command line: PID 1 is duplexmpe itself (SIGTERM reaches it), the
	// index becomes --shard, each shard writes its own directory on the shared volume.
	if len(main.Command) != 1 || !strings.HasSuffix(main.Command[0], "/duplexmpe") {
		t.Errorf("command %q: want the duplexmpe binary itself, not a shell, so that it gets the pod's SIGTERM", main.Command)
	}
	if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds < 60 {
		t.Errorf("terminationGracePeriodSeconds %v: give duplexmpe a minute to stop between frames", pod.TerminationGracePeriodSeconds)
	}
	env := map[string]string{}
	for _, e := range main.Env {
		env[e.Name] = e.Value
	}
	if env["SHARDS"] != strconv.Itoa(n) {
		t.Errorf("SHARDS = %q, want completions (%d)", env["SHARDS"], n)
	}
	for _, ref := range regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).FindAllStringSubmatch(strings.Join(main.Args, " "), -1) {
		if _, ok := env[ref[1]]; !ok && ref[1] != "JOB_COMPLETION_INDEX" {
			t.Errorf("the args use $(%s), which the container does not set: Kubernetes leaves it unexpanded", ref[1])
		}
	}
	if len(main.Args) < 2 || main.Args[0] != "run" {
		t.Fatalf("args %q: want run FILE.hcl ...", main.Args)
	}
	shardFlag := flagValues(main.Args, "--shard")
	if len(shardFlag) != 1 || shardFlag[0] != "$(JOB_COMPLETION_INDEX)/$(SHARDS)" {
		t.Errorf("--shard %q, want $(JOB_COMPLETION_INDEX)/$(SHARDS)", shardFlag)
	}
	data := volumeMount(t, m, pod, main)
	runFile := repoPath(t, main.Args[1])
	outs := map[string]bool{}
	for i := range n {
		expand := func(s string) string {
			return strings.NewReplacer("$(JOB_COMPLETION_INDEX)", strconv.Itoa(i), "$(SHARDS)", env["SHARDS"]).Replace(s)
		}
		if sh, err := store.ParseShard(expand(shardFlag[0])); err != nil || sh != (store.Shard{Index: i, Count: n}) {
			t.Errorf("pod %d plays shard %v (%v), want %d/%d", i, sh, err, i, n)
		}
		vars := varFlags(t, main.Args, expand)
		f := loadRunFile(t, runFile, vars)
		ev := f.Evaluations[0]
		if ev.Out != vars["out"] {
			t.Errorf("pod %d: the run file writes %s, not the out it is given (%s): declare variable \"out\" and set out = var.out", i, ev.Out, vars["out"])
		}
		if !strings.HasPrefix(ev.Out, data+"/") || !strings.HasPrefix(f.Dataset(ev.Dataset).Out, data+"/") {
			t.Errorf("pod %d: run directory %s or dataset %s is not on the shared volume (%s)", i, ev.Out, f.Dataset(ev.Dataset).Out, data)
		}
		if outs[ev.Out] {
			t.Errorf("two pods write %s", ev.Out)
		}
		outs[ev.Out] = true
		if i == 0 {
			if got := modelPort(t, f, ev); got != port {
				t.Errorf("the run file's model plugin dials port %d, the sidecar listens on %d", got, port)
			}
		}
	}
}

func TestBuildAndMergeJobsMatchTheShards(t *testing.T) {
	m := load(t)
	shards := m.job(t, "duplexmpe-shards")
	main := container(t, shards.Spec.Template.Spec.Containers, "duplexmpe")
	n := int(*shards.Spec.Completions)
	vars := varFlags(t, main.Args, func(s string) string { return s })
	root := filepath.Dir(vars["out"])
	shardDir := strings.NewReplacer("$(JOB_COMPLETION_INDEX)", "*", "$(SHARDS)", strconv.Itoa(n)).Replace(filepath.Base(vars["out"]))
	runFile := main.Args[1]

	build := m.job(t, "duplexmpe-build")
	bc := container(t, build.Spec.Template.Spec.Containers, "duplexmpe")
	volumeMount(t, m, build.Spec.Template.Spec, bc)
	if len(bc.Args) < 2 || bc.Args[0] != "build" || bc.Args[1] != runFile {
		t.Errorf("the build Job runs %q, want build %s", bc.Args, runFile)
	}
	if got := varFlags(t, bc.Args, func(s string) string { return s })["dataset_out"]; got != vars["dataset_out"] {
		t.Errorf("the build Job builds the dataset into %q, the shards read %q", got, vars["dataset_out"])
	}

	merge := m.job(t, "duplexmpe-merge")
	mp := merge.Spec.Template.Spec
	mc := container(t, mp.Containers, "duplexmpe")
	volumeMount(t, m, mp, mc)
	if mp.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("the merge Job's restartPolicy is %q", mp.RestartPolicy)
	}
	script := strings.Join(mc.Args, "\n")
	for _, want := range []string{
		"for d in " + root + "/" + shardDir + "; do",
		"duplexmpe merge " + root + "/merged $dirs",
		"duplexmpe score " + root + "/merged --run-file " + runFile + " --var dataset_out=" + vars["dataset_out"],
		"set -eu",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the merge Job's script does not say %q:\n%s", want, script)
		}
	}
	// The merge must not score an incomplete run: merge's exit 1 stops the script.
	if !regexp.MustCompile(`(?m)^set -eu\n(.*\n)*.*duplexmpe merge .*\n(.*\n)*exec .*duplexmpe score`).MatchString(script) {
		t.Errorf("the merge Job's script does not stop at a failed merge before scoring:\n%s", script)
	}
}

func TestVolumeIsSharedReadWriteMany(t *testing.T) {
	m := load(t)
	if len(m.pvcs) != 1 {
		t.Fatalf("%d PersistentVolumeClaims, want the one shared volume", len(m.pvcs))
	}
	for name, c := range m.pvcs {
		if len(c.Spec.AccessModes) != 1 || c.Spec.AccessModes[0] != corev1.ReadWriteMany {
			t.Errorf("claim %s: access modes %v, want ReadWriteMany (shards on several nodes write at once)", name, c.Spec.AccessModes)
		}
		if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || q.IsZero() {
			t.Errorf("claim %s requests no storage", name)
		}
	}
}

func container(t *testing.T, cs []corev1.Container, name string) corev1.Container {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %q", name)
	return corev1.Container{}
}

// volumeMount checks that c mounts the shared claim and returns the mount path.
func volumeMount(t *testing.T, m manifests, pod corev1.PodSpec, c corev1.Container) string {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != vm.Name || v.PersistentVolumeClaim == nil {
				continue
			}
			if m.pvcs[v.PersistentVolumeClaim.ClaimName] == nil {
				t.Errorf("volume %s claims %q, which no manifest here defines", v.Name, v.PersistentVolumeClaim.ClaimName)
			}
			if vm.ReadOnly {
				t.Errorf("container %s mounts the shared volume read-only", c.Name)
			}
			return filepath.Clean(vm.MountPath)
		}
	}
	t.Fatalf("container %s mounts no PersistentVolumeClaim", c.Name)
	return ""
}

func probePort(t *testing.T, p *corev1.Probe) int {
	t.Helper()
	switch {
	case p.TCPSocket != nil:
		return p.TCPSocket.Port.IntValue()
	case p.HTTPGet != nil:
		return p.HTTPGet.Port.IntValue()
	}
	t.Fatalf("probe %+v checks no port", p)
	return 0
}

func flagValues(args []string, flag string) []string {
	var vs []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			vs = append(vs, args[i+1])
		}
	}
	return vs
}

func varFlags(t *testing.T, args []string, expand func(string) string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range flagValues(args, "--var") {
		name, value, ok := strings.Cut(expand(kv), "=")
		if !ok {
			t.Fatalf("--var %q", kv)
		}
		vars[name] = value
	}
	return vars
}

// repoPath maps a path in the image to the repository.
func repoPath(t *testing.T, p string) string {
	t.Helper()
	rel, ok := strings.CutPrefix(p, imageRoot+"/")
	if !ok {
		t.Fatalf("%s is not in the image's repository (%s)", p, imageRoot)
	}
	abs, err := filepath.Abs(filepath.Join("..", "..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func loadRunFile(t *testing.T, path string, vars map[string]string) *config.File {
	t.Helper()
	f, diags := config.Load(path, config.Options{Vars: vars, Env: map[string]string{}})
	var errs bytes.Buffer
	for _, d := range diags {
		// The run file names plugins by their place in the image; a checkout that has
		// not built them gets warnings, not errors.
		if d.Severity == hcl.DiagError {
			fmt.Fprintf(&errs, "%s: %s\n", d.Summary, d.Detail)
		}
	}
	if diags.HasErrors() {
		t.Fatalf("%s with %v:\n%s", path, vars, errs.String())
	}
	if len(f.Evaluations) != 1 {
		t.Fatalf("%s has %d evaluation blocks; the manifests play one", path, len(f.Evaluations))
	}
	return f
}

// modelPort is the port of the url in the config of ev's model plugin.
func modelPort(t *testing.T, f *config.File, ev *config.Evaluation) int {
	t.Helper()
	if len(ev.Models) != 1 {
		t.Fatalf("evaluation %s has %d models; one server sidecar serves one", ev.Name, len(ev.Models))
	}
	attrs, diags := f.Plugin(ev.Models[0]).Config.JustAttributes()
	if diags.HasErrors() || attrs["url"] == nil {
		t.Fatalf("plugin %s has no url in its config block", ev.Models[0])
	}
	v, diags := attrs["url"].Expr.Value(nil)
	if diags.HasErrors() {
		t.Fatalf("plugin %s: url: %v", ev.Models[0], diags)
	}
	u, err := url.Parse(v.AsString())
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("plugin %s dials %q: want the pod's loopback, where the sidecar listens (%v)", ev.Models[0], v.AsString(), err)
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}
