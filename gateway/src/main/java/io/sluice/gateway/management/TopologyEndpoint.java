package io.sluice.gateway.management;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.stereotype.Component;

/** {@code GET /actuator/topology}: the same view as {@code /actuator/partitions}, under the name operators also try. */
@Component
@Endpoint(id = "topology")
public class TopologyEndpoint
{
    private final ClusterViewService cluster;

    public TopologyEndpoint(final ClusterViewService cluster)
    {
        this.cluster = cluster;
    }

    @ReadOperation
    public ClusterView topology()
    {
        return cluster.view();
    }
}
