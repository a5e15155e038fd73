"""The local backend's models: loading (Hugging Face directories, GGUF files, embedded models),
decoder weights, the pretrained weights and tokenizer the package ships, and context lengths.
"""
