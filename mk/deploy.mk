# Taking a run to a cluster (examples/deploy, docs/scale.md). `make test-slurm` plays
# examples/deploy/baselines.hcl as a job array on a real one-node Slurm cluster that it
# starts and stops itself (examples/deploy/slurm/cluster.sh: Debian's munge, slurmctld
# and slurmd, installed when missing; needs root), and compares the merge with a
# single-machine run. `.ci/run` calls it after `make test`. The Kubernetes manifests are
# decoded strictly by `go test ./examples/deploy/kubernetes`, part of `make test`.

TEST_EXTRA += validate-deploy

.PHONY: test-slurm validate-deploy

validate-deploy: build
	@for f in examples/deploy/*.hcl; do \
		$(BIN)/duplexmpe validate --no-start $$f || exit 1; \
	done

test-slurm: build dataset-check
	DMPE_TEST_SLURM=1 $(GO) test -count=1 -timeout 60m -v -run '^TestSlurmArray$$' ./examples/deploy/slurm
