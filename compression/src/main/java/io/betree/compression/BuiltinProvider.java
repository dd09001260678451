package io.betree.compression;

import java.util.List;
import java.util.function.IntFunction;
import java.util.function.IntUnaryOperator;

/** Provider of a built-in codec: the codec class supplies its level check and constructor. */
final class BuiltinProvider implements CompressorProvider {

    private final String name;
    private final int id;
    private final int defaultLevel;
    private final IntUnaryOperator levelCheck;
    private final IntFunction<BlockCompressor> factory;

    private BuiltinProvider(String name, int id, int defaultLevel, IntUnaryOperator levelCheck,
            IntFunction<BlockCompressor> factory) {
        this.name = name;
        this.id = id;
        this.defaultLevel = defaultLevel;
        this.levelCheck = levelCheck;
        this.factory = factory;
    }

    /** The built-in codecs in id order. */
    static List<CompressorProvider> all() {
        return List.of(
                new BuiltinProvider(NoneCompressor.NAME, NoneCompressor.ID, 0,
                        BuiltinProvider::checkNoneLevel, level -> new NoneCompressor()),
                new BuiltinProvider(Lz4Compressor.NAME, Lz4Compressor.ID, Lz4Compressor.DEFAULT_LEVEL,
                        Lz4Compressor::checkLevel, Lz4Compressor::new),
                new BuiltinProvider(ZstdCompressor.NAME, ZstdCompressor.ID, ZstdCompressor.DEFAULT_LEVEL,
                        ZstdCompressor::checkLevel, ZstdCompressor::new),
                new BuiltinProvider(XzCompressor.NAME, XzCompressor.ID, XzCompressor.DEFAULT_LEVEL,
                        XzCompressor::checkLevel, XzCompressor::new),
                new BuiltinProvider(DeflateCompressor.NAME, DeflateCompressor.ID, DeflateCompressor.DEFAULT_LEVEL,
                        DeflateCompressor::checkLevel, DeflateCompressor::new));
    }

    private static int checkNoneLevel(int level) {
        if (level != 0) {
            throw new IllegalArgumentException("invalid none level " + level + "; the only valid level is 0");
        }
        return level;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int id() {
        return id;
    }

    @Override
    public int defaultLevel() {
        return defaultLevel;
    }

    @Override
    public void validateLevel(int level) {
        levelCheck.applyAsInt(level);
    }

    @Override
    public BlockCompressor create(int level) {
        return factory.apply(level);
    }

    @Override
    public String toString() {
        return "builtin codec " + name;
    }
}
