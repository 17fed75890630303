package io.sluice.protocol.cluster;

/**
 * Thrown for a cluster setting that cannot work; the message names the setting and the value so a
 * process can stop with that one line.
 */
public final class InvalidClusterConfigException extends IllegalArgumentException
{
    private final String setting;

    public InvalidClusterConfigException(final String setting, final String message)
    {
        super(setting + ": " + message);
        this.setting = setting;
    }

    public String setting()
    {
        return setting;
    }
}
