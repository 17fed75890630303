package io.sluice.dist;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.web.server.PortInUseException;

import java.util.Map;

/**
 * Turns a startup failure into the one line an operator reads: {@code sluice: <setting>: <problem>}.
 * The setting is found in the cause chain: a cluster setting the broker or distribution refused, a
 * property that would not bind, or a port already in use.
 */
final class StartupFailure
{
    private StartupFailure()
    {
    }

    /**
     * @param ports effective {@code server.port} and {@code management.server.port}, to name which one
     *              was in use; may be empty.
     */
    static String describe(final Throwable failure, final Map<String, Integer> ports)
    {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause())
        {
            if (t instanceof InvalidClusterConfigException invalid)
            {
                return "sluice: " + invalid.setting() + ": " + withoutSetting(invalid.getMessage(), invalid.setting());
            }
            if (t instanceof BindException bind && bind.getProperty() != null)
            {
                final Throwable root = rootCause(bind);
                final Object value = bind.getProperty().getValue();
                return "sluice: " + bind.getProperty().getName() + ": cannot use '" + value + "' (" +
                    (root == bind ? bind.getMessage() : root.getMessage()) + ")";
            }
            if (t instanceof BindException bind)
            {
                return "sluice: " + bind.getName() + ": " + rootCause(bind).getMessage();
            }
            if (t instanceof PortInUseException inUse)
            {
                String setting = "server.port";
                for (final Map.Entry<String, Integer> port : ports.entrySet())
                {
                    if (port.getValue() != null && port.getValue() == inUse.getPort())
                    {
                        setting = port.getKey();
                    }
                }
                return "sluice: " + setting + ": port " + inUse.getPort() + " is already in use";
            }
            if (t instanceof java.net.BindException bind)
            {
                return "sluice: " + PartitionDistribution.BROKERS_SETTING + ": cannot listen: " + bind.getMessage();
            }
        }
        final Throwable root = rootCause(failure);
        return "sluice: startup failed: " + (root.getMessage() == null ? root.toString() : root.getMessage());
    }

    private static String withoutSetting(final String message, final String setting)
    {
        return message.startsWith(setting + ": ") ? message.substring(setting.length() + 2) : message;
    }

    private static Throwable rootCause(final Throwable failure)
    {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root)
        {
            root = root.getCause();
        }
        return root;
    }
}
