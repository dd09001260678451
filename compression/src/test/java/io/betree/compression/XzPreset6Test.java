package io.betree.compression;

/** Contract run for xz at the default preset 6. */
class XzPreset6Test extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new XzCompressor(6);
    }

    /**
     * Preset 6 needs about 6 s for the 16 MiB input on a 2-core machine, most of the module's test
     * time, so that case compresses at preset 0 (and decompresses with the preset 6 instance); every
     * other case compresses at preset 6.
     */
    @Override
    protected BlockCompressor largeInputCompressor() {
        return new XzCompressor(0);
    }

    @Override
    protected boolean checksummed() {
        return true;
    }
}
