import pytest

torch = pytest.importorskip("torch")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="vLLM needs a CUDA GPU")
def test_vllm_backend_imports_where_available():
    pytest.importorskip("vllm")
    from trainers.generation.vllm_backend import VLLMBackend

    assert callable(VLLMBackend.generate) and callable(VLLMBackend.sync_weights)


def test_vllm_missing_gives_a_clear_error():
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="llm-coop-envs\\[vllm\\]"):
            import trainers.generation.vllm_backend  # noqa: F401
    else:
        pytest.skip("vLLM is installed here")
