package io.betree.internal.fault;

/** A directory's lock is held by another environment, in this process or another one. */
public class DirectoryInUseException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** The message names the directory and, where known, the holder. */
    public DirectoryInUseException(String message) {
        super(message);
    }
}
