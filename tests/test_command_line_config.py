"""Our flags travel with the generation config a tool builds from its command line, never in
process-wide state: a later hub call in the same process sees only its own keyword arguments."""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import fairseq_cli.generate as generate_tool
    from fairseq import options
    from fairseq.dataclass.configs import GenerationConfig
    from omegaconf import OmegaConf
    import fairseq_fast
    from fairseq_fast import options as ours

    data, path, draft = sys.argv[1:4]
    args = options.parse_args_and_arch(options.get_generation_parser(), [
        data, "--path", path, "--beam", "1", "--generator", "speculative", "--draft-path", draft,
        "--draft-len", "3", "--postprocess-workers", "2"])
    cfg = generate_tool.convert_namespace_to_omegaconf(args)  # as fairseq_cli.generate.main
    assert ours.from_command_line(cfg.generation)
    resolved = ours.resolve(cfg.generation)
    assert (resolved.generator, resolved.draft_len, resolved.draft_path) == (
        "speculative", 3, draft), resolved
    assert ours.postprocess_workers(cfg) == 2

    # a generation config made later in the same process, as the hub makes one
    hub = OmegaConf.structured(GenerationConfig(beam=1))
    assert not ours.from_command_line(hub)
    assert ours.resolve(hub).generator == "default"
    assert ours.resolve(hub).draft_len == 4
    assert ours.postprocess_workers(OmegaConf.create({"generation": hub})) == 0
    print("ok")
""")


def test_flags_ride_in_the_tools_config_and_nothing_leaks_into_later_calls(tmp_path):
    path, draft = tmp_path / "target.pt", tmp_path / "draft.pt"
    path.write_bytes(b"x")
    draft.write_bytes(b"x")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), str(path), str(draft)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
