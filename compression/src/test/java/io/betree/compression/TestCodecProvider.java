package io.betree.compression;

/** Registers {@link ReversingCompressor}; loaded through {@link java.util.ServiceLoader} in tests. */
public final class TestCodecProvider implements CompressorProvider {

    static final int ID = 200;
    static final String NAME = "reverse-test";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int id() {
        return ID;
    }

    @Override
    public int defaultLevel() {
        return 0;
    }

    @Override
    public void validateLevel(int level) {
        if (level != 0) {
            throw new IllegalArgumentException("reverse-test only has level 0");
        }
    }

    @Override
    public BlockCompressor create(int level) {
        return new ReversingCompressor();
    }
}
