/** @odoo-module */
/**
 * The steps of the tours that reach a screen of the AI app through its menus.
 */

/**
 * The apps menu and the app's tile, as web_tour's stepUtils.goToAppSteps does (the module that
 * exports it moved in Odoo 19, so the tours of both series take these steps instead).
 */
export function goToApp(xmlid) {
    return [
        {trigger: ".o_navbar_apps_menu button:enabled", run: "click"},
        {trigger: `.o_app[data-menu-xmlid="${xmlid}"]`, run: "click"},
    ];
}

/** An entry of the app's Configuration menu. */
export function configMenu(xmlid) {
    return [
        {trigger: 'button[data-menu-xmlid="ai_mcp.menu_ai_config"]', run: "click"},
        {trigger: `a[data-menu-xmlid="ai_mcp.${xmlid}"]`, run: "click"},
    ];
}
