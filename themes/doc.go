// Package themes embeds fgtop's colour themes and turns one into styles.
package themes
