public final class BERTEmbedder {}
