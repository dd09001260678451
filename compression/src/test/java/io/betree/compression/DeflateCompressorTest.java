package io.betree.compression;

/**
 * Contract run for deflate at the default level 6. Deflate streams end with an Adler-32, but it is
 * too weak to promise that corruption is always noticed (fuzzing found about one corrupted block in
 * 10^5 accepted with wrong output), so the contract treats deflate as unchecked.
 */
class DeflateCompressorTest extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new DeflateCompressor();
    }
}
