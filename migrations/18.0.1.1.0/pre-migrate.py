"""18.0.1.1.0: "AI User" implies "Internal User".

On update Odoo adds the implied group to every member by SQL, without the check that a user has
one user type. A portal or public user who was given "AI User" would become portal and internal at
once; such a user could never open the assistant (a backend client action), so the role is taken
from them before the update, and the log says who lost it.
"""

import logging

_logger = logging.getLogger(__name__)


def migrate(cr, version):
    cr.execute(
        """
        DELETE FROM res_groups_users_rel rel
         USING ir_model_data ai, ir_model_data share_group, res_groups_users_rel share_rel
         WHERE ai.module = 'ai_mcp' AND ai.name = 'group_ai_user' AND ai.model = 'res.groups'
           AND rel.gid = ai.res_id
           AND share_group.module = 'base' AND share_group.name IN ('group_portal', 'group_public')
           AND share_rel.gid = share_group.res_id AND share_rel.uid = rel.uid
        RETURNING rel.uid
        """
    )
    uids = sorted(uid for (uid,) in cr.fetchall())
    if uids:
        _logger.warning(
            "ai_mcp: portal or public users %s lose the AI User role, which now makes an internal user", uids
        )
