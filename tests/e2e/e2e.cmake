# Whole experiments on a real master, agents and trial processes, one binary:
#   agent_loss_e2e_test       a trial that fails, an agent that dies under a running trial
#   commands_e2e_test         `ring cmd`: exit codes, context, waiting, kill, preemption, master restart
#   shell_e2e_test            `ring shell` in a real pseudo-terminal: type, resize, Ctrl-C, detach, reopen, refusals,
#                             a master restart
#   container_e2e_test        environment.image: pools that cannot run it refuse it; the quadratic
#                             example in a small podman image, killed and resumed bit for bit; an
#                             image that cannot be pulled; a mixed pool places images only on the
#                             agent with podman (these skip, saying why, where podman cannot run);
#                             a slow pull (fake podman) keeps the agent serving, a kill ends it
#   quadratic_e2e_test        `ring experiment create` to metrics in SQLite, the CLI and REST
#   experiment_edit_e2e_test  name, description and labels edited after submit, the list's filters;
#                             fork, templates, delete (no row left in the stopped master's SQLite)
#   run_as_owner_e2e_test     `ring user link-unix`: a trial runs as another Unix account and owns
#                             its files (skips when not root)
#   fault_tolerance_e2e_test  kill -9 and SIGSTOP while the quadratic trial trains; same result
#   search_e2e_test           every searcher's example config; ASHA; kill -9 of the master mid-search
#   log_policies_e2e_test     log_policies: exclude_node moves a restart, cancel_retries ends a trial
#   trial_driven_e2e_test     adaptive_asha with time_metric stops trials through preemption
#   per_node_launch_e2e_test  per-node launch: one process per agent starts its own workers
#   scheduling_e2e_test       fair share (weights 1 and 3) on 4 CPU slots
#   svm_e2e_test              the svm example, two ranks on two agents (skips without python3-sklearn)
#   digits_pytorch_e2e_test   the digits-pytorch example (skips when /usr/bin/python3 has no
#                             torch or the ringtrial module was not built)
#   determined_core_api_e2e_test  Determined's Core API tutorial, unmodified, through the
#                             `determined` package (skips when the ringtrial module was not built)
#   determined_collective_attack_e2e_test  a stranger on the chief's collective port cannot join
#                             or inject a pickle
#   torchrun_script_e2e_test  an unmodified torchrun-style script (examples/torchrun-script) on two
#                             agents (skips when /usr/bin/python3 has no torch)
#   warm_start_e2e_test       searcher.source_trial_id: a second experiment starts from the first's
#                             checkpoint; another user is refused where experiments are private
#   digits_e2e_test           the digits-libtorch example on loopback, and
#   digits_netns_e2e_test     with master and agents in network namespaces of their own
#                             (both skip, saying why, in a build without libtorch)
if(TARGET ringtrial_torch)
  set(ring_have_torch 1)
else()
  set(ring_have_torch 0)
endif()
ring_add_test(e2e_tests LABEL e2e TIMEOUT 300
  SOURCES
    e2e/agent_loss_e2e_test.cc
    e2e/checkpoint_policy_e2e_test.cc
    e2e/commands_e2e_test.cc
    e2e/container_e2e_test.cc
    e2e/digits_e2e_test.cc
    e2e/digits_harness.cc
    e2e/digits_netns_e2e_test.cc
    e2e/determined_collective_attack_e2e_test.cc
    e2e/determined_core_api_e2e_test.cc
    e2e/determined_config_e2e_test.cc
    e2e/experiment_edit_e2e_test.cc
    e2e/digits_pytorch_e2e_test.cc
    e2e/fault_tolerance_e2e_test.cc
    e2e/log_policies_e2e_test.cc
    e2e/per_node_launch_e2e_test.cc
    e2e/quadratic_e2e_test.cc
    e2e/run_as_owner_e2e_test.cc
    e2e/scheduling_e2e_test.cc
    e2e/search_e2e_test.cc
    e2e/shell_e2e_test.cc
    e2e/svm_e2e_test.cc
    e2e/torchrun_script_e2e_test.cc
    e2e/trial_continue_e2e_test.cc
    e2e/trial_driven_e2e_test.cc
    e2e/warm_start_e2e_test.cc
  LIBS ring_test_support ring_common SQLite::SQLite3)  # SQLite: a deleted experiment's rows, read back
target_compile_definitions(e2e_tests PRIVATE RING_HAVE_TORCH=${ring_have_torch})
add_dependencies(e2e_tests ringmaster ringagent ring quadratic_model quadratic_trial svm_model)
foreach(model digits_model digits_pytorch_model ringtrial_python)
  if(TARGET ${model})
    add_dependencies(e2e_tests ${model})
  endif()
endforeach()

# model_registry_e2e_tests: `ring model` on a real master, agent and
# quadratic trial: a checkpoint registered as a version, described,
# downloaded, kept from garbage collection, its experiment kept until the
# version is deleted. A binary of its own, so that it builds without the
# other e2e tests.
ring_add_test(model_registry_e2e_tests LABEL e2e TIMEOUT 180
  SOURCES e2e/model_registry_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(model_registry_e2e_tests ringmaster ringagent ring quadratic_model quadratic_trial)

# workspaces_e2e_tests: workspaces and projects on a real master, agent and
# quadratic trial: who reads what on a private and a team-readable master,
# pools opened by binding, a workspace's default pool, moving experiments,
# the list's filters. A binary of its own.
ring_add_test(workspaces_e2e_tests LABEL e2e TIMEOUT 240
  SOURCES e2e/workspaces_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(workspaces_e2e_tests ringmaster ringagent ring quadratic_model quadratic_trial)

# proxy_e2e_tests: the task proxy against a real master, agent and a trial
# that serves HTTP and a WebSocket echo: links, cookies, streamed answers,
# keep-alive, per-user and idle limits, TLS, and each attack
# docs/security.md lists for it; notebooks (real Jupyter through the proxy,
# a cell run over its kernel's WebSocket, refusals, the idle timeout). A binary of its own, so that
# working on the proxy does not rebuild every e2e test.
ring_add_test(proxy_e2e_tests LABEL e2e TIMEOUT 240
  SOURCES e2e/notebook_e2e_test.cc e2e/proxy_e2e_test.cc
  LIBS ring_test_support ring_common ring_auth)
add_dependencies(proxy_e2e_tests ringmaster ringagent ring quadratic_model quadratic_trial)
if(TARGET ringtrial_python)
  add_dependencies(proxy_e2e_tests ringtrial_python)  # ring_notebook.py beside the module
endif()

# slurm_e2e_test: the Slurm resource manager against a real slurmctld and two
# slurmd in network namespaces (tests/support/slurm_cluster.h);
# slurm_identity_e2e_test: jobs as their owners, the submit helper's
# refusals; slurm_rest_e2e_test: jobs as their owners through slurmrestd;
# slurm_runs_e2e_test: ASHA, pause/activate, digits-libtorch on two
# nodes; slurm_tasks_e2e_test: a command, a shell's terminal and a notebook
# through the proxy on a Slurm pool. Their own binary, so that one Slurm cluster serves all of its cases. Skips,
# saying why, when not root or slurm-wlm and munge are not installed (and the
# container case when podman cannot run a container).
ring_add_test(slurm_e2e_tests LABEL e2e TIMEOUT 420
  SOURCES e2e/slurm_e2e_test.cc e2e/slurm_identity_e2e_test.cc e2e/slurm_rest_e2e_test.cc e2e/slurm_runs_e2e_test.cc
    e2e/slurm_tasks_e2e_test.cc
    e2e/digits_harness.cc
  LIBS ring_test_support ring_common)
target_compile_definitions(slurm_e2e_tests PRIVATE RING_HAVE_TORCH=${ring_have_torch})
add_dependencies(slurm_e2e_tests ringmaster ringagent ring ring-slurm-submit quadratic_model quadratic_trial)
foreach(model digits_model ringtrial_python)  # ring_notebook.py beside the module
  if(TARGET ${model})
    add_dependencies(slurm_e2e_tests ${model})
  endif()
endforeach()

# webhooks_e2e_tests: webhooks against a real master, agent and trials,
# posting to an HTTP receiver the test starts (tests/support/fake_http_server.h):
# signed state and log events, Slack's shape, retries, refusals. A binary of
# its own, so that working on webhooks does not rebuild every e2e test.
ring_add_test(webhooks_e2e_tests LABEL e2e TIMEOUT 180
  SOURCES e2e/webhooks_e2e_test.cc
  LIBS ring_test_support ring_common OpenSSL::Crypto)
add_dependencies(webhooks_e2e_tests ringmaster ringagent ring)
