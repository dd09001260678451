package io.betree;

/**
 * The directory is already open in another {@link Environment}, in this process or another one
 * (it holds a file lock while open). The message names the directory and, where known, the
 * process that holds it. Close the other environment first.
 */
public class DirectoryInUseException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception naming the directory and, where known, its holder. */
    public DirectoryInUseException(String message) {
        super(message);
    }
}
