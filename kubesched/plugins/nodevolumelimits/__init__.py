"""Node volume limits: NodeVolumeLimits (CSI drivers) and the deprecated in-tree EBS / GCE PD /
Azure Disk limits that the v1 default profile still lists (v1.30 registers all of them)."""
