package io.betree.compression;

import net.jpountz.lz4.LZ4Factory;

/**
 * Contract run for LZ4 with the fast compressor of lz4-java's pure-Java build, the one used on
 * JDK 24+ without native access; {@link Lz4CompressorTest} covers whichever build the JVM running
 * the tests selects.
 */
class Lz4JavaCompressorTest extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new Lz4Compressor(0, LZ4Factory.safeInstance());
    }
}
