from setuptools import find_packages, setup

setup(
    name="fairseq_fast",
    version="0.1.0",
    description="Faster sequence generation for fairseq: speculative decoding as a --user-dir plugin",
    packages=find_packages(include=["fairseq_fast", "fairseq_fast.*"]),
    package_data={"fairseq_fast.kernels": ["csrc/*.c", "csrc/*.h"]},  # compiled on first use
    python_requires=">=3.9",
    install_requires=["torch>=2.0", "numpy<2"],  # fairseq itself: see README (fairseq-fixed)
    entry_points={"console_scripts": ["fairseq-fast-user-dir=fairseq_fast.paths:main",
                                      "fairseq-fast-draft=fairseq_fast.draft.cli:main"]},
)
